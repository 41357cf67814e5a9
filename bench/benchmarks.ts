/** The registry `bench/run.ts` runs from, in default order. */

import { agentBench } from "./agent/suite.ts";
import type { Benchmark, ReportBenchmark } from "./harness.ts";
import { hostReplayFrontBench } from "./host-replay/front.ts";
import { hostReplayQuickBench } from "./host-replay/quick.ts";
import { hostReplayBench } from "./host-replay/suite.ts";
import { storeBench } from "./store/suite.ts";
import { commitCostBench } from "./suites/commit-cost.ts";
import { compactionBench } from "./suites/compaction.ts";
import { foldBench } from "./suites/fold.ts";
import { prefixCacheBench } from "./suites/prefix-cache.ts";
import { replayBench } from "./suites/replay.ts";
import { reportBench } from "./suites/report.ts";
import { runtimeBench } from "./suites/runtime.ts";
import { searchCostBench } from "./suites/search-cost.ts";
import { startupBench } from "./suites/startup.ts";
import { survivalBench } from "./survival/suite.ts";

export const BENCHMARKS: readonly Benchmark[] = [
	reportBench,
	prefixCacheBench,
	compactionBench,
	foldBench,
	replayBench,
	runtimeBench,
	startupBench,
];

/** Benchmarks that write their own report (run whole sessions); `--preset` picks their size. */
export const REPORT_BENCHMARKS: readonly ReportBenchmark[] = [
	agentBench,
	hostReplayBench,
	hostReplayQuickBench,
	hostReplayFrontBench,
	survivalBench,
	storeBench,
	commitCostBench,
	searchCostBench,
];
