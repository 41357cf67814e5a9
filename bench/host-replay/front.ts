/**
 * `npm run bench -- host-replay-front`: the trade the working-set constant
 * picks a point on. The quick loop's headless replay (quick.ts) run at a
 * range of working-set shares (the horizon's share of the serving budget,
 * `WORKING_SET_BUDGET_SHARE`), each scored against issue 27's two
 * per-session reference targets (replies, edit anchors) and its median
 * charged-cost line: where on this front, if anywhere, they hold at once.
 * (The third per-session target, no compaction and no request past Pi's
 * line, is the quick loop's and the real-Pi run's to judge.)
 *
 * Two presets, two files: `tuned` (what the constant may be chosen on) and
 * `held-out` (a judgement of the policy family, never a tuning input: no
 * constant is chosen from it). Real sessions only: the targets bind those.
 */

import type { ReplyScore } from "../../src/cost/out-of-view/scorer.ts";
import { median } from "../../src/cost/out-of-view/summary.ts";
import { projectSavings } from "../../src/cost/projected-savings.ts";
import { WORKING_SET_BUDGET_SHARE } from "../../src/fold/policy/working-set.ts";
import { presetOf, type ReportBenchmark } from "../harness.ts";
import { QUICK_WINDOWS, quickSession } from "./quick.ts";
import { availableSessions, PI_COMPACTION, SANITY_WINDOW, SESSIONS, type SessionSet } from "./sessions.ts";
import { CHARGED_MEDIAN_BOUND, costRatios, type SessionOutcome, sessionTargets } from "./targets.ts";

/** The shares the front is drawn at: from a horizon near the floor to one that keeps most of a 200k session raw. */
export const FRONT_SHARES: readonly number[] = [
	...new Set([0.02, 0.04, 0.06, 0.12, 0.2, 0.4, WORKING_SET_BUDGET_SHARE]),
].sort((a, b) => a - b);

/** One session at one window and share: the defaults at that share against native. */
export interface FrontPoint {
	share: number;
	outcome: SessionOutcome;
}

/** One row of the front: a window and a share over every session. */
export interface FrontRow {
	window: number;
	share: number;
	charged: number;
	raw: number;
	/** Sessions meeting the reply target, and the edit target. */
	replyPasses: number;
	editPasses: number;
	sessions: number;
	/** Per session: "charged×, replies a/n, edits e/m" with ✗ on a missed target. */
	cells: string[];
}

/** The front's rows (pure), window by window, shares in ascending order. */
export function frontRows(points: readonly FrontPoint[]): FrontRow[] {
	const rows: FrontRow[] = [];
	const windows = [...new Set(points.map((point) => point.outcome.window))];
	const shares = [...new Set(points.map((point) => point.share))].sort((a, b) => a - b);
	for (const window of windows) {
		for (const share of shares) {
			const outcomes = points
				.filter((point) => point.share === share && point.outcome.window === window)
				.map((point) => point.outcome);
			const rated = outcomes.map((outcome) => ({ outcome, ratio: costRatios(outcome) }));
			const charged = median(rated.map(({ ratio }) => ratio.charged));
			const raw = median(rated.map(({ ratio }) => ratio.raw));
			if (charged === undefined || raw === undefined) continue;
			let replyPasses = 0;
			let editPasses = 0;
			const cells = rated.map(({ outcome, ratio }) => {
				const [reply, edit] = sessionTargets(outcome);
				if (reply?.pass) replyPasses++;
				if (edit?.pass) editPasses++;
				const seen = outcome.defaults.outOfView;
				return `${ratio.charged.toFixed(2)}×, ${seen.repliesWithAbsent}/${seen.replies}${reply?.pass ? "" : " ✗"}, ${seen.editsWithAbsentAnchors}/${seen.edits}${edit?.pass ? "" : " ✗"}`;
			});
			rows.push({ window, share, charged, raw, replyPasses, editPasses, sessions: outcomes.length, cells });
		}
	}
	return rows;
}

/** Per window: the cheapest share at which every session meets both reference targets, or none. */
export function frontVerdicts(rows: readonly FrontRow[]): string[] {
	const windows = [...new Set(rows.map((row) => row.window))];
	return windows.map((window) => {
		const meeting = rows.filter(
			(row) => row.window === window && row.replyPasses === row.sessions && row.editPasses === row.sessions,
		);
		const best = [...meeting].sort((a, b) => a.charged - b.charged || a.share - b.share)[0];
		const where = `@${window / 1000}k`;
		if (!best) return `- ${where}: at no share do all sessions meet both reference targets`;
		const verdict = best.charged <= CHARGED_MEDIAN_BOUND ? "meets" : "misses";
		const shares = meeting.map((row) => row.share).join(", ");
		return `- ${where}: every session meets both reference targets at share ${shares}; the cheapest of those (${best.share}) costs ${best.charged.toFixed(2)}× native charged (raw ${best.raw.toFixed(2)}×), which ${verdict} the ${CHARGED_MEDIAN_BOUND}× line`;
	});
}

/** The front as a markdown table, one row per window and share. */
export function frontTable(rows: readonly FrontRow[], sessions: readonly string[]): string[] {
	const head = `| window | share | median charged (raw) | reply target | edit target | ${sessions.join(" | ")} |`;
	const rule = `| ---: | ---: | ---: | ---: | ---: | ${sessions.map(() => "---").join(" | ")} |`;
	return [
		head,
		rule,
		...rows.map(
			(row) =>
				`| ${row.window / 1000}k | ${row.share}${row.share === WORKING_SET_BUDGET_SHARE ? " (default)" : ""} | ${row.charged.toFixed(2)}× (${row.raw.toFixed(2)}×) | ${row.replyPasses}/${row.sessions} | ${row.editPasses}/${row.sessions} | ${row.cells.join(" | ")} |`,
		),
	];
}

/** Ages (replies since last seen) the edit-anchor line is drawn at. */
export const ANCHOR_AGES: readonly number[] = [10, 25, 50, 100];

/**
 * How old the lines edits quote are (pure): for each reply with an edit
 * whose anchor lines occurred earlier, the oldest of those lines' ages
 * (replies since the line was last seen anywhere). Scored with nothing
 * hidden, it is a property of the session, not of a policy: an edit whose
 * anchor was last seen 100 replies ago is out of view under any policy that
 * hides what nobody has shown for 100 replies. Counted per reply (a reply
 * may hold several edits; the scorer records ages per reference, not per
 * edit), so the count is of replies, a little under the front's edit
 * denominators.
 */
export function editAnchorAges(replies: readonly ReplyScore[]): number[] {
	const ages: number[] = [];
	for (const reply of replies) {
		if (reply.edits.length === 0) continue;
		let oldest = -1;
		for (const reference of reply.references) if (reference.kind === "anchor") oldest = Math.max(oldest, reference.age);
		if (oldest >= 0) ages.push(oldest);
	}
	return ages;
}

/** "- s: 126 replies hold an edit quoting earlier lines; … last seen, replies before: ≥ 10 in 47, ≥ 25 in 27, …". */
export function anchorAgeLine(session: string, ages: readonly number[]): string {
	const counts = ANCHOR_AGES.map((age) => `≥ ${age} in ${ages.filter((value) => value >= age).length}`).join(", ");
	return `- ${session}: ${ages.length} replies hold an edit quoting earlier lines; the oldest line such a reply quotes was last seen, replies before: ${counts}`;
}

/** Which hidden references a count reads: an edit's anchor lines (the edit target), or any reference (the reply target). */
export type HiddenKind = "anchors" | "any";

/**
 * Replies that hid something, and of those, how many hid something last
 * seen fewer than each of `ANCHOR_AGES` replies before (pure): a target
 * counted by how recent what it misses is. "anchors": replies with an edit
 * whose request lacked one of its anchor lines (the edit target); "any":
 * replies whose request lacked any reference (the reply target). "Read a
 * file, edit it a few steps later" is the recent end; a line nobody has
 * shown for a hundred replies is the old end.
 */
export function hiddenCounts(replies: readonly ReplyScore[], kind: HiddenKind): { all: number; under: number[] } {
	let all = 0;
	const under = ANCHOR_AGES.map(() => 0);
	for (const reply of replies) {
		if (kind === "anchors" && reply.edits.length === 0) continue;
		const hidden = reply.references.filter(
			(reference) => reference.state === "absent" && (kind === "any" || reference.kind === "anchor"),
		);
		if (hidden.length === 0) continue;
		all++;
		const youngest = Math.min(...hidden.map((reference) => reference.age));
		ANCHOR_AGES.forEach((age, k) => {
			if (youngest < age) under[k] = (under[k] ?? 0) + 1;
		});
	}
	return { all, under };
}

/** "- s @200k: pi-fold 5 (< 10: 0, < 25: 0, …); native 0 (…)". */
export function hiddenLine(
	where: string,
	defaults: ReturnType<typeof hiddenCounts>,
	native: ReturnType<typeof hiddenCounts>,
): string {
	const split = (counts: ReturnType<typeof hiddenCounts>) =>
		`${counts.all} (${ANCHOR_AGES.map((age, k) => `< ${age}: ${counts.under[k] ?? 0}`).join(", ")})`;
	return `- ${where}: pi-fold ${split(defaults)}; native ${split(native)}`;
}

const FRONT_PRESETS: Readonly<Record<string, SessionSet>> = { tuned: "tuned", "held-out": "held-out" };

export const hostReplayFrontBench: ReportBenchmark = {
	name: "host-replay-front",
	description:
		"the quick loop at a range of working-set shares: where, if anywhere, the reference targets and the 0.75× charged line hold together",
	presets: Object.keys(FRONT_PRESETS),
	defaultPreset: "tuned",
	async report(presetName, context) {
		const set = presetOf(FRONT_PRESETS, presetName);
		const { sessions, missing } = availableSessions(
			SESSIONS.filter((session) => session.set === set && session.origin === "real"),
		);
		for (const line of missing) context.log(`   ${line}`);
		const points: FrontPoint[] = [];
		const hidden: Record<HiddenKind, string[]> = { anchors: [], any: [] };
		for (const session of sessions) {
			for (const window of QUICK_WINDOWS) {
				for (const share of FRONT_SHARES) {
					const result = await quickSession(session, window, { workingSetShare: share });
					points.push({ share, outcome: result.outcome });
					if (share === WORKING_SET_BUDGET_SHARE) {
						const where = `${session.name} @${window / 1000}k`;
						const { defaults, native } = result.replies;
						for (const kind of ["anchors", "any"] as const)
							hidden[kind].push(hiddenLine(where, hiddenCounts(defaults, kind), hiddenCounts(native, kind)));
					}
				}
			}
		}
		const ages: string[] = [];
		for (const session of sessions) {
			// Nothing compacts on this window: every reference scores raw, with its age.
			const whole = await projectSavings(session.branch(), "/", { ...PI_COMPACTION, contextWindow: SANITY_WINDOW });
			ages.push(anchorAgeLine(session.name, editAnchorAges(whole.outOfView.native.score.replies)));
		}
		const rows = frontRows(points);
		const lines = [
			`# Benchmark: the working-set front (${set} real sessions)`,
			"",
			`The quick loop's headless replay (\`npm run bench -- host-replay-quick\`) run with the working-set horizon at ${FRONT_SHARES.length} shares of the serving budget (the default is ${WORKING_SET_BUDGET_SHARE}), every other rule as shipped. Each cell: charged cost over native's, replies with an absent reference, edits with absent anchor lines; ✗ marks a missed per-session target (replies ≤ native's + 5% of replies, edits ≤ native's + 1). ${set === "held-out" ? "Held-out sessions: a judgement of the policy family, not a tuning input; no constant was chosen from this file." : "Tuned sessions: what the constant may be chosen on."}`,
			"",
			`- Command: \`${context.command}\``,
			`- Date: ${context.date}`,
			...(missing.length > 0 ? ["", "Left out (not on this machine):", "", ...missing.map((line) => `- ${line}`)] : []),
			"",
			"## Where the targets meet",
			"",
			...frontVerdicts(rows),
			"",
			"## How old the lines edits quote are",
			"",
			"Scored with nothing hidden (a window nothing fills): the edit target (≤ native's + 1) asks that, where native never compacts, almost none of these lines be folded.",
			"",
			...ages,
			"",
			`## Edits that hid an anchor, by how recently it was last seen (the default share, ${WORKING_SET_BUDGET_SHARE})`,
			"",
			"Replies with an edit whose request lacked one of its anchor lines; in brackets, those where the youngest hidden anchor was last seen fewer than N replies before.",
			"",
			...hidden.anchors,
			"",
			`## Replies that hid a reference, by how recently it was last seen (the default share, ${WORKING_SET_BUDGET_SHARE})`,
			"",
			"Replies whose request lacked one of the references they make; in brackets, those where the youngest hidden reference was last seen fewer than N replies before.",
			"",
			...hidden.any,
			"",
			"## The front",
			"",
			...frontTable(
				rows,
				sessions.map((session) => session.name),
			),
			"",
			'Method: docs/benchmarks.md, "What the window hid" and "The working-set front".',
		];
		return { body: `${lines.join("\n")}\n`, file: `host-replay-front-${set}.md` };
	},
};
