/** The registry `bench/run.ts` runs from, in default order. */

import type { Benchmark } from "./harness.ts";
import { compactionBench } from "./suites/compaction.ts";
import { foldBench } from "./suites/fold.ts";
import { prefixCacheBench } from "./suites/prefix-cache.ts";
import { reportBench } from "./suites/report.ts";

export const BENCHMARKS: readonly Benchmark[] = [reportBench, prefixCacheBench, compactionBench, foldBench];
