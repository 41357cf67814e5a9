/**
 * `runtime`: what the fold runtime costs per request at scale, the
 * compactor at scale, and the fold store against raw SHA-256.
 *
 * Timed per size (1,000 / 5,000 / 10,000 / 20,000 generated entries, folded
 * as bench/runtime/fixtures.ts describes): the whole path between a response
 * and the next request, its boundary and `context` halves, a boundary that
 * commits, and Pi's own projection of the same branch for scale. The
 * compactor cases are the `compaction` suite's, reused as they are. The
 * store is async, so it is timed by bench/runtime/store-throughput.ts and
 * reported as facts. Memory figures are process.memoryUsage() deltas:
 * approximate (the collector may run in between).
 */

import { hostFacts } from "../../src/cost/fold-replay.ts";
import { pendingDrafts, projectBranch } from "../../src/cost/fold-shell.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import type { BenchCase, Benchmark, BenchRatio } from "../harness.ts";
import { type FoldedFixture, foldedFixture, RAW_TAIL_CHAPTERS, RECENT_ROOTS } from "../runtime/fixtures.ts";
import { timeRealRuntime } from "../runtime/real-runtime.ts";
import { boundaryStep, contextStep, requestPath } from "../runtime/request-path.ts";
import { timeStore } from "../runtime/store-throughput.ts";
import { compactionBench } from "./compaction.ts";

/** Branch sizes the issue names. */
export const RUNTIME_SIZES = [1_000, 5_000, 10_000, 20_000] as const;
/** Awaited calls per step when timing the real runtime. */
export const REAL_RUNTIME_RUNS = 15;
/** Store runs per blob size (the store is timed outside the harness, which times synchronous work only). */
export const STORE_RUNS = 11;
/** The host the fixtures are read under: Pi's catalog entry for the first real log's model, a 5,000-token system prompt. */
const HOST_MODEL = "anthropic/claude-opus-4-5";
const HOST_FIXED_TOKENS = 5_000;
const HOST_CWD = "/project";

const integer = new Intl.NumberFormat("en-US");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

function heap(): { heapUsed: number; rss: number } {
	const usage = process.memoryUsage();
	return { heapUsed: usage.heapUsed, rss: usage.rss };
}

export const runtimeBench: Benchmark = {
	name: "runtime",
	description:
		"Fold runtime overhead per request at 1,000–20,000 entries with folds present, the compactor at scale, fold store write + verify against raw SHA-256, approximate memory.",
	async prepare() {
		const options = resolveOptions();
		const host = hostFacts(HOST_MODEL, HOST_FIXED_TOKENS, HOST_CWD);
		const cases: BenchCase[] = [];
		const ratios: BenchRatio[] = [];
		const facts = [
			"| entries (generated) | branch entries | bytes | folds | visible folds | steady boundary | committing boundary | fixture heap | one request: heap Δ / rss Δ |",
			"| ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |",
		];
		const fixtures: FoldedFixture[] = [];
		for (const size of RUNTIME_SIZES) {
			const before = heap();
			const fixture = foldedFixture(size, options, host);
			const built = heap();
			fixtures.push(fixture);
			const { branch, shell } = fixture;
			const steady = boundaryStep(branch, shell, options, host);
			const committing = boundaryStep(branch, shell, options, host, "threshold");
			const beforeRequest = heap();
			requestPath(branch, shell, options, host);
			const afterRequest = heap();
			const input = { bytes: fixture.bytes, entries: branch.length };
			const label = integer.format(size);
			cases.push(
				{ label: `request path ${label}`, input, run: () => requestPath(branch, shell, options, host) },
				{ label: `boundary ${label}`, input, run: () => boundaryStep(branch, shell, options, host) },
				{ label: `context hook ${label}`, input, run: () => contextStep(branch, shell, options, host) },
				{
					label: `committing boundary ${label}`,
					input,
					run: () => boundaryStep(branch, shell, options, host, "threshold"),
				},
				{ label: `Pi projection ${label}`, input, run: () => projectBranch(branch) },
				{ label: `pending drafts ${label}`, input, run: () => pendingDrafts(branch, shell, options) },
				{
					label: `analyze branch ${label}`,
					input,
					run: () => analyzeBranch(branch, { readOnlyTools: options.readOnlyTools }),
				},
			);
			facts.push(
				`| ${label} | ${integer.format(branch.length)} | ${integer.format(fixture.bytes)} | ${integer.format(fixture.folds)} | ${fixture.visibleFolds} | ${steady.committed ? `commits ${steady.folds}` : `declines (${steady.declined ?? "?"})`} | ${committing.committed ? `${committing.folds} folds, ${committing.drafts} drafts` : `no commit (${committing.declined ?? "?"})`} | ${mib(built.heapUsed - before.heapUsed)} | ${mib(afterRequest.heapUsed - beforeRequest.heapUsed)} / ${mib(afterRequest.rss - beforeRequest.rss)} |`,
			);
		}
		facts.push(
			"",
			`The real runtime (\`src/fold/runtime.ts\`, \`bench/runtime/real-runtime.ts\`) driven through its own Pi event handlers over an in-memory Pi session of the same branch; Pi's own boundary preview projection is built outside the timing, as Pi builds it anyway. Medians of ${REAL_RUNTIME_RUNS} awaited, interleaved calls:`,
			"",
			"| entries (generated) | branch entries | turn boundary (ladder + drafts) | context hook | per request |",
			"| ---: | ---: | ---: | ---: | ---: |",
		);
		for (const fixture of fixtures) {
			const real = await timeRealRuntime(fixture.branch, REAL_RUNTIME_RUNS);
			facts.push(
				`| ${integer.format(fixture.generatedEntries)} | ${integer.format(fixture.branch.length)} | ${real.boundaryMs.toFixed(1)} ms | ${real.contextMs.toFixed(1)} ms | ${(real.boundaryMs + real.contextMs).toFixed(1)} ms |`,
			);
		}
		for (let i = 1; i < RUNTIME_SIZES.length; i++) {
			const small = integer.format(RUNTIME_SIZES[i - 1] ?? 0);
			const large = integer.format(RUNTIME_SIZES[i] ?? 0);
			const factor = (RUNTIME_SIZES[i] ?? 0) / (RUNTIME_SIZES[i - 1] ?? 1);
			ratios.push({
				numerator: `request path ${large}`,
				denominator: `request path ${small}`,
				meaning: `request path growth ${small} → ${large} entries (linear: ${factor.toFixed(2)}×)`,
			});
			ratios.push({
				numerator: `Pi projection ${large}`,
				denominator: `Pi projection ${small}`,
				meaning: `Pi projection growth ${small} → ${large} entries (linear: ${factor.toFixed(2)}×)`,
			});
		}
		for (const size of RUNTIME_SIZES) {
			const label = integer.format(size);
			ratios.push({
				numerator: `request path ${label}`,
				denominator: `Pi projection ${label}`,
				meaning: `request path ÷ one Pi projection, ${label} entries`,
			});
		}

		const compaction = await compactionBench.prepare();
		cases.push(...compaction.cases);

		const store = await timeStore(STORE_RUNS);
		facts.push(
			"",
			`Fold store (\`openFileFoldStore\` \`put\` into a fresh store, then verified \`read\`) against raw \`crypto.createHash("sha256")\` on the same bytes, ${STORE_RUNS} interleaved runs after one warm-up, medians:`,
			"",
			"| blob | write + verify | raw SHA-256 | ratio | write + verify MB/s | SHA-256 MB/s |",
			"| ---: | ---: | ---: | ---: | ---: | ---: |",
			...store.map(
				(row) =>
					`| ${mib(row.bytes)} | ${row.writeVerifyMs.toFixed(2)} ms | ${row.sha256Ms.toFixed(2)} ms | ${row.ratio.toFixed(2)}× | ${row.writeVerifyMBps.toFixed(0)} | ${row.sha256MBps.toFixed(0)} |`,
			),
			"",
			`Process peak RSS after preparing every input: ${mib(process.resourceUsage().maxRSS * 1024)} (includes the compaction suite's inputs).`,
			"",
			"Compaction inputs (the `compaction` suite's own facts):",
			"",
			...(compaction.facts ?? []),
		);
		return {
			cases,
			ratios,
			facts,
			notes: [
				`- Fixtures (\`bench/runtime/fixtures.ts\`): \`generateSession(n)\` (seed 1: user asks, 1–4 read / grep / bash / edit / write calls with 50–6,500-character results, 8% errors, some thinking, a closing reply), then every completed tool batch and closed chapter folded (\`foldEverything\` from the fold suite), all chapter folds but the newest ${RECENT_ROOTS} consolidated into one fold (the shape the ladder's consolidation rule converges to), the newest ${RAW_TAIL_CHAPTERS} chapters raw; the fold records, state entries and every \`context_edit\` are appended to the branch, and the shell has observed one request.`,
				`- Host: ${HOST_MODEL} from Pi's catalog (serving budget = its context window; its card's prices), a ${integer.format(HOST_FIXED_TOKENS)}-token system prompt, default options.`,
				"- `request path` = `boundary` (runtime `onBoundary`: window reading with its pending-drafts check and projections, `analyzeBranch`, `decideCommit`, the boundary's drafts) + `context hook` (runtime `onContext`: Pi's messages sized for the budget check, projection, pending drafts, size for the fence verdict, `observeRequest`). The steps are `src/cost/fold-shell.ts`, which mirrors src/fold/runtime.ts call for call; not included: Pi's `getBranch()` walks, the store write of a commit (timed separately below), `requeueLost`.",
				"- `committing boundary` forces a `threshold` commit (what Pi's compaction trigger makes the runtime do): the raw tail's eligible batches are planned by `planCommit`, applied with `persistChange`, and their drafts computed.",
				"- `Pi projection` is one `buildSessionProjection` of the same branch: what Pi itself spends per request, for scale. `pending drafts` (one `planWindow` + `editDrafts` with its projection; the request path runs it three times) and `analyze branch` (`analyzeBranch`, once per boundary) are parts of the request path, timed alone to show where it goes.",
				"- Compaction cases are the `compaction` suite's (`npm run bench -- compaction`), run here unchanged.",
				"- Memory: heap / rss deltas from `process.memoryUsage()` around building a fixture and around one untimed request path; approximate (garbage collection may run in between, and a negative delta means it did).",
			],
		};
	},
};
