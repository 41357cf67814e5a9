/**
 * `runtime`: what the fold engine costs per request at scale, what it adds
 * to resuming a long session in real Pi, state replay of a huge delta, the
 * compactor at scale, and the fold store against raw SHA-256.
 *
 * Per size (1,000 / 5,000 / 10,000 / 20,000 / 50,000 generated entries, folded as
 * bench/runtime/fixtures.ts describes): one request as the session grows
 * (a turn appended, the boundary, the `context` hook) driven on the engine
 * directly, beside Pi's own projection of the same branch; the same request
 * through the real Pi adapter's event handlers (real-runtime.ts); a forced
 * commit; the engine's rebuild at resume; the session file and the fold
 * store beside it. Real Pi's start-up on the 20,000-entry fixture (the size
 * issue 28's resume target names) with and without pi-fold (resume.ts). The compactor cases are the
 * `compaction` suite's, reused as they are. Memory figures are
 * process.memoryUsage() deltas: approximate (the collector may run in
 * between).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { hostFacts } from "../../src/cost/fold-replay.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { rebuildState } from "../../src/fold/state/state.ts";
import { type BenchCase, type Benchmark, type BenchRatio, median } from "../harness.ts";
import { storeBeside } from "../runtime/commit-cost.ts";
import { type FoldedFixture, foldedFixture, RAW_TAIL_CHAPTERS, RECENT_ROOTS } from "../runtime/fixtures.ts";
import { timeRealRuntime } from "../runtime/real-runtime.ts";
import { boundaryStep, engineOn, requestPath } from "../runtime/request-path.ts";
import { resumeTable, timeResume } from "../runtime/resume.ts";
import { timeStore } from "../runtime/store-throughput.ts";
import { compactionBench } from "./compaction.ts";

/** Branch sizes the issue names. */
export const RUNTIME_SIZES = [1_000, 5_000, 10_000, 20_000, 50_000] as const;
/** The size whose fixture real Pi resumes: issue 28's target is stated on it, and commit-cost resumes the same one. */
export const RESUME_SIZE = 20_000;
/** Requests timed through the real adapter per size. */
export const REAL_RUNTIME_RUNS = 21;
/** Forced commits timed per size (each on a fresh engine). */
const COMMIT_RUNS = 5;
/** Real Pi resumes per arm (each several seconds at 20,000 entries; five: two arms on two cores are noisy). */
export const RESUME_RUNS = 5;
/** Ops in the state-replay case: one schema-valid delta line. */
export const REPLAY_OPS = 200_000;
/** Store runs per blob size (the store is timed outside the harness, which times synchronous work only). */
export const STORE_RUNS = 11;
/** The host the fixtures are read under: Pi's catalog entry for the first real log's model, a 5,000-token system prompt. */
const HOST_MODEL = "anthropic/claude-opus-4-5";
const HOST_FIXED_TOKENS = 5_000;
const HOST_CWD = "/project";
const PREFIX = "pi-fold-active-context";

const integer = new Intl.NumberFormat("en-US");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

function heap(): { heapUsed: number; rss: number } {
	const usage = process.memoryUsage();
	return { heapUsed: usage.heapUsed, rss: usage.rss };
}

/** A branch whose fold state is one delta of `ops` protect ops. */
function hugeDelta(ops: number): SessionEntry[] {
	const data = { v: 1, ops: Array.from({ length: ops }, (_, i) => ({ op: "protect", ids: [`e${i}`] })) };
	return [
		{
			type: "custom",
			customType: `${PREFIX}:delta`,
			data,
			id: "delta",
			parentId: null,
			timestamp: "2026-01-01T00:00:00.000Z",
		},
	] as SessionEntry[];
}

/** Median time of a forced (threshold) commit at a boundary, each on a freshly loaded engine. */
async function timeCommit(
	fixture: FoldedFixture,
	options: ReturnType<typeof resolveOptions>,
	host: ReturnType<typeof hostFacts>,
) {
	const times: number[] = [];
	let run = await boundaryStep(engineOn(fixture.branch, options, host), host, "threshold");
	for (let i = 0; i < COMMIT_RUNS; i++) {
		const engine = engineOn(fixture.branch, options, host);
		const start = performance.now();
		run = await boundaryStep(engine, host, "threshold");
		times.push(performance.now() - start);
	}
	return { run, ms: median(times) };
}

export const runtimeBench: Benchmark = {
	name: "runtime",
	description:
		"Fold engine overhead per request at 1,000–50,000 entries with folds present (engine alone and through the Pi adapter, against Pi's own projection), resume in real Pi with and without pi-fold, state replay of 200,000 ops, the compactor at scale, fold store write + verify against raw SHA-256.",
	async prepare() {
		const options = resolveOptions();
		const host = hostFacts(HOST_MODEL, HOST_FIXED_TOKENS, HOST_CWD);
		const cases: BenchCase[] = [];
		const ratios: BenchRatio[] = [];
		const facts = [
			"| entries (generated) | branch entries | bytes | session file | fold store | store ÷ session | folds | visible folds | steady boundary | forced commit | forced commit time | engine heap after resume |",
			"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |",
		];
		const fixtures: FoldedFixture[] = [];
		for (const size of RUNTIME_SIZES) {
			const fixture = foldedFixture(size, options, HOST_CWD);
			fixtures.push(fixture);
			const { branch } = fixture;
			const sizes = await storeBeside(fixture);
			const steady = await boundaryStep(engineOn(branch, options, host), host);
			const commit = await timeCommit(fixture, options, host);
			const before = heap();
			const engine = engineOn(branch, options, host);
			const after = heap();
			let turn = 0;
			const input = { bytes: fixture.bytes, entries: branch.length };
			const label = integer.format(size);
			cases.push(
				{ label: `request path ${label}`, input, run: () => requestPath(engine, host, turn++) },
				{
					label: `Pi projection ${label}`,
					input,
					run: () => buildSessionProjection(branch, branch.at(-1)?.id ?? null),
				},
				{ label: `engine resume ${label}`, input, run: () => new FoldEngine(options).reset(branch) },
			);
			facts.push(
				`| ${label} | ${integer.format(branch.length)} | ${integer.format(fixture.bytes)} | ${mib(sizes.sessionBytes)} | ${mib(sizes.storeBytes)} | ${(sizes.storeBytes / sizes.sessionBytes).toFixed(2)}× | ${integer.format(fixture.folds)} | ${fixture.visibleFolds} | ${steady.committed ? `commits ${steady.folds}` : `declines (${steady.declined ?? "?"})`} | ${commit.run.committed ? `${commit.run.folds} folds, ${commit.run.drafts} drafts` : `no commit (${commit.run.declined ?? "?"})`} | ${ms(commit.ms)} ms | ${mib(after.heapUsed - before.heapUsed)} |`,
			);
		}
		const replayBranch = hugeDelta(REPLAY_OPS);
		cases.push({
			label: `state replay ${integer.format(REPLAY_OPS)} ops`,
			input: { entries: 1 },
			run: () => rebuildState(replayBranch, PREFIX),
		});
		facts.push(
			"",
			`The real Pi adapter (\`src/fold/pi/runtime.ts\` over the engine, \`bench/runtime/real-runtime.ts\`) driven through its own Pi event handlers over an in-memory Pi session of the same branch, one turn appended before each request; medians of ${REAL_RUNTIME_RUNS} requests, Pi's projection of the same branch timed in the same loop:`,
			"",
			"| entries (generated) | branch entries | turn boundary | context hook | per request | Pi projection | per request ÷ Pi projection |",
			"| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
		);
		const real: { size: number; requestMs: number }[] = [];
		for (const fixture of fixtures) {
			const timed = await timeRealRuntime(fixture.branch, REAL_RUNTIME_RUNS);
			real.push({ size: fixture.generatedEntries, requestMs: timed.requestMs });
			facts.push(
				`| ${integer.format(fixture.generatedEntries)} | ${integer.format(fixture.branch.length)} | ${ms(timed.boundaryMs)} ms | ${ms(timed.contextMs)} ms | ${ms(timed.requestMs)} ms | ${ms(timed.piProjectionMs)} ms | ${(timed.requestMs / timed.piProjectionMs).toFixed(3)}× |`,
			);
		}
		facts.push(
			"",
			`Growth of the adapter's per-request time: ${real
				.slice(1)
				.map((row, i) => {
					const prev = real[i];
					return prev
						? `${integer.format(prev.size)} → ${integer.format(row.size)} entries ${(row.requestMs / prev.requestMs).toFixed(2)}× (linear ${(row.size / prev.size).toFixed(2)}×)`
						: "";
				})
				.join("; ")}.`,
		);
		facts.push(
			"",
			"The ladder's long-session commit and the fold store beside the session file: `npm run bench -- commit-cost` (bench/results/commit-cost.md).",
		);
		const resumed = fixtures.find((fixture) => fixture.generatedEntries === RESUME_SIZE);
		if (!resumed) throw new Error(`runtime: RESUME_SIZE ${RESUME_SIZE} is not among RUNTIME_SIZES`);
		const resume = await timeResume(resumed.branch, RESUME_RUNS, resumed.writeStore);
		facts.push(
			"",
			`Resume in real Pi (\`pi --session <file> -p hi\`, loopback provider, the ${integer.format(resumed.generatedEntries)}-entry fixture: ${integer.format(resumed.branch.length)} branch entries), medians of ${resume.runs} runs per arm, arms alternating (\`bench/runtime/resume.ts\`). "Until the first request": from spawn until the provider receives the request, and Pi's peak resident memory at that moment (what a person waits for on resume); "whole run": until Pi exits, which adds what the boundaries after the reply do (the ladder's commit, when it decides one):`,
			"",
			...resumeTable(resume),
		);
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
			ratios.push({
				numerator: `engine resume ${label}`,
				denominator: `Pi projection ${label}`,
				meaning: `engine rebuild at resume ÷ one Pi projection, ${label} entries`,
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
				"- `session file` is the branch as Pi's JSONL (generated entries, fold state, context edits); `fold store` is every file of the store once every fold's source is written as the runtime writes it (a fold with children as a part list over theirs, `bench/runtime/commit-cost.ts` `storeBeside`); `bytes` is the generated entries' canonical JSONL alone.",
				`- Fixtures (\`bench/runtime/fixtures.ts\`): \`generateSession(n)\` (seed 1: user asks, 1–4 read / grep / bash / edit / write calls with 50–6,500-character results, 8% errors, some thinking, a closing reply), then every completed tool batch and closed chapter folded (\`foldEverything\` from the fold suite), all chapter folds but the newest ${RECENT_ROOTS} consolidated into one fold (the shape the ladder's consolidation rule converges to), the newest ${RAW_TAIL_CHAPTERS} chapters raw; the fold records, state entries and the engine's own \`context_edit\` drafts are appended to the branch.`,
				`- Host: ${HOST_MODEL} from Pi's catalog (serving budget = its context window; its card's prices), a ${integer.format(HOST_FIXED_TOKENS)}-token system prompt, default options (epoch scheduling; the adapter runs with the default session summarizer, which finds nothing to prepare on these fixtures).`,
				"- `request path` (engine alone, `bench/runtime/request-path.ts`): one turn (an assistant's read and its ~1,500-character result) appended to the engine's branch, then the engine's boundary (`boundary`: reconcile, the ladder's decision, a commit when decided with its sources stored in memory, the hand-off, persisted here) and the `context` hook (`prepareRequest`: fence check, the request, the instrument). The branch grows by one turn per run, as a session does. The adapter table times the same through Pi's `turn_end` and `context` handlers, with Pi's messages structured-cloned outside the timing; it includes the adapter's walk from Pi's leaf back to the last known entry.",
				"- `Pi projection` is one `buildSessionProjection` of the same branch: what Pi itself spends per request (at least once), for scale. `engine resume` is `FoldEngine.reset` on the branch: state rebuild, branch view, Pi's projection with its token reading, lost-commit lookup (the adapter adds the store's open).",
				"- `forced commit` is a `threshold` commit at a boundary on a freshly loaded engine (what Pi's compaction trigger makes the runtime do): the raw tail's eligible batches planned, applied, and the drafts that show them computed (a full plan of the window: the one step that reads the whole branch, once per commit).",
				`- \`state replay\` rebuilds the fold state from one schema-valid delta of ${integer.format(REPLAY_OPS)} \`protect\` ops (issue 18.1: each op in constant time).`,
				"- Resume: real Pi 1.6.0 CLI on a file holding the 20,000-entry fixture, `--session <file> -p hi` against the loopback provider, once with `-e <this package>` and once without extensions; GNU time's elapsed seconds and maximum resident set size of the Pi process. Each run opens a fresh copy of the file, and the pi-fold arm a fresh copy of the fold store written for it (every fold's source, as the runtime stores it).",
				"- Compaction cases are the `compaction` suite's (`npm run bench -- compaction`), run here unchanged.",
			],
		};
	},
};
