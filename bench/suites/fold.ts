/**
 * `fold`: what the fold runtime costs per request on the real logs, next to
 * what Pi itself spends building the same projection.
 *
 * Every request runs the runtime's window check (analyze the branch, plan the
 * window from the fold state, diff it against the persisted edits); with the
 * edits persisted that diff is empty, which is the steady state measured
 * here. Pi's own `buildSessionProjection` of the same branch is the baseline.
 * The facts report how far folding every closed chapter and tool batch
 * shrinks each log's window.
 */

import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { emptyInstrument, messageDigest, observeRequest, sentDigests } from "../../src/fold/engine/instrument.ts";
import { editDrafts, planWindow } from "../../src/fold/engine/materialize.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import { DEFAULT_BRAND_NOUN } from "../../src/fold/options.ts";
import { emptyFoldState, liveLattice, persistChange, rebuildState } from "../../src/fold/state/state.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import type { BenchCase, Benchmark, BenchRatio } from "../harness.ts";
import { foldEverything } from "../runtime/fixtures.ts";
import { realLogs } from "../sessions.ts";

const PREFIX = "pi-fold-active-context";

function persist(branch: readonly SessionEntry[], drafts: readonly ContextEditEntryDraft[]): SessionEntry[] {
	const out = [...branch];
	for (const draft of drafts)
		out.push({ ...draft, id: `bench-${out.length}`, parentId: out.at(-1)?.id ?? null, timestamp: "t" });
	return out;
}

export const foldBench: Benchmark = {
	name: "fold",
	description: "Per-request cost of the fold runtime's window check on the real logs, against Pi's own projection.",
	prepare() {
		const cases: BenchCase[] = [];
		const ratios: BenchRatio[] = [];
		const facts: string[] = [];
		for (const log of realLogs()) {
			const branch = loadSessionFile(log.path).manager.getBranch();
			const lattice = foldEverything(analyzeBranch(branch));
			const plan = (on: readonly SessionEntry[]) =>
				planWindow(on, {
					lattice,
					expanded: new Set(),
					briefOf: (record) => record.brief,
					brandNoun: DEFAULT_BRAND_NOUN,
				});
			const folded = persist(branch, editDrafts(branch, plan(branch)));
			const input = { bytes: log.bytes, entries: folded.length };
			const window = (on: readonly SessionEntry[]) => buildSessionProjection([...on], on.at(-1)?.id).messages;
			const check = `window check ${log.name}`;
			const baseline = `Pi projection ${log.name}`;
			cases.push(
				{ label: baseline, input, run: () => window(folded) },
				{ label: check, input, run: () => editDrafts(folded, plan(folded)) },
				{ label: `analyze branch ${log.name}`, input, run: () => analyzeBranch(folded) },
			);
			ratios.push({
				numerator: check,
				denominator: baseline,
				meaning: "runtime window check per request ÷ Pi's own projection of the same branch",
			});

			// The instrument's per-request observation: memoized digests of the persisted projection's
			// objects (what the runtime observes) against hashing fresh clones (what the context event carries).
			// Measured on the unfolded window, where the hashing cost is largest.
			const messages = window(branch);
			let instrument = observeRequest(emptyInstrument(), messages).state;
			const observeMemo = `observe request, persisted objects ${log.name}`;
			const observeClones = `observe request, structured clones ${log.name}`;
			// What the runtime does since issue 18.8: the sent list (Pi's clones) compared with our own objects,
			// whose digests are memoized. The clone is made once, outside the timed call, as Pi makes it; reusing it
			// times the same work, since equal messages take our digest and are never hashed (nor memoized).
			const observeSent = `observe request, sent clones against our own ${log.name}`;
			const ownDigests = messages.map(messageDigest);
			const sent = structuredClone(messages);
			cases.push(
				{ label: observeMemo, input, run: () => (instrument = observeRequest(instrument, window(branch)).state) },
				{
					label: observeClones,
					input,
					run: () => (instrument = observeRequest(instrument, structuredClone(messages)).state),
				},
				{
					label: observeSent,
					input,
					run: () => {
						const digests = sentDigests(sent, messages, ownDigests);
						instrument = observeRequest(instrument, sent, digests, ownDigests).state;
					},
				},
			);
			ratios.push(
				{
					numerator: observeClones,
					denominator: observeMemo,
					meaning: "instrument cost without the digest memo ÷ with it",
				},
				{
					numerator: observeSent,
					denominator: observeMemo,
					meaning: "observing what is sent (clones compared with our own) ÷ the persisted objects alone",
				},
			);

			const records = [...lattice.folds.values()];
			const state = persistChange(emptyFoldState(), PREFIX, records, []);
			const stateEntries: SessionEntry[] = state.entries.map((entry, index) => ({
				type: "custom",
				customType: entry.customType,
				data: entry.data,
				id: `s${index}`,
				parentId: null,
				timestamp: "t",
			}));
			cases.push({
				label: `rebuild state + live lattice ${log.name}`,
				input: { entries: stateEntries.length },
				run: () => liveLattice(rebuildState(stateEntries, PREFIX)),
			});

			const rawBytes = canonicalJson(window(branch)).length;
			const foldedBytes = canonicalJson(window(folded)).length;
			const pending = editDrafts(folded, plan(folded)).length;
			facts.push(
				`- ${log.name}: ${records.length} folds (every completed tool batch and closed chapter); window ${rawBytes.toLocaleString("en-US")} → ${foldedBytes.toLocaleString("en-US")} characters of canonical JSON (${((100 * foldedBytes) / rawBytes).toFixed(1)}%); pending edits in the steady state: ${pending}`,
			);
		}
		return {
			cases,
			ratios,
			facts,
			notes: [
				"- The branch is the log's active branch with every fold's context edits persisted; the window check then finds nothing to change, as on every request after a commit.",
				"- `observe request` runs on the unfolded window; `persisted objects` includes building Pi's projection (the memo needs its stable objects); `structured clones` hashes a fresh copy each time, as the context event's messages would be.",
				"- `rebuild state + live lattice` replays the custom entries that hold every fold record and validates the lattice (what session_start and /tree do).",
			],
		};
	},
};
