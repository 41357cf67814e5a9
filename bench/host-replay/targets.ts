/**
 * Issue 27's targets as pass/fail lines (pure), from per-session outcomes of
 * the native and defaults arms: the real-Pi run and the quick headless loop
 * print the same lines. The targets bind the held-out real sessions; the
 * quick loop prints them for the tuned set too, as a guide, labelled so.
 *
 * Per session and window: replies with an absent reference ≤ native's + 5%
 * of replies; edits with absent anchor lines ≤ native's + 1; no compaction;
 * no request past Pi's line; the report's estimate within 0.05 of the host,
 * raw and charged (real Pi only). Per window: the median charged cost ≤ 0.75×
 * native's.
 */

import type { OutOfViewSummary } from "../../src/cost/out-of-view/summary.ts";
import { median } from "../../src/cost/out-of-view/summary.ts";

/** Replies with an absent reference may exceed native's by this share of the replies. */
export const REPLY_MARGIN = 0.05;
/** Edits with absent anchor lines may exceed native's by this many. */
export const EDIT_MARGIN = 1;
/** The median charged cost over the sessions of a set and window must be at most this times native's. */
export const CHARGED_MEDIAN_BOUND = 0.75;
/** Issue 20's bound on how far `pi-fold report`'s estimate may be from the host's ratio (raw and charged). */
export const REPORT_AGREEMENT = 0.05;

/** One arm's figures in one session and window. */
export interface ArmOutcome {
	rawCost: number;
	chargedCost: number;
	outOfView: OutOfViewSummary;
	compactions: number;
	/** Requests above Pi's compaction line. */
	pastLine: number;
}

export interface SessionOutcome {
	session: string;
	window: number;
	native: ArmOutcome;
	defaults: ArmOutcome;
	/** The report's estimates against the host's ratios (real-Pi runs only). */
	report?: { raw: number; charged: number };
}

export interface TargetLine {
	pass: boolean;
	text: string;
}

const percent = (value: number) => `${(100 * value).toFixed(1)}%`;
const ratio = (value: number) => `${value.toFixed(2)}×`;

/** A share of replies: count over replies (0 when none were scored). */
export function replyShare(summary: OutOfViewSummary): number {
	return summary.replies === 0 ? 0 : summary.repliesWithAbsent / summary.replies;
}

/** Charged and raw cost of defaults over native's. */
export function costRatios(outcome: SessionOutcome): { charged: number; raw: number } {
	return {
		charged: outcome.defaults.chargedCost / outcome.native.chargedCost,
		raw: outcome.defaults.rawCost / outcome.native.rawCost,
	};
}

/** The per-session lines of one session and window. */
export function sessionTargets(outcome: SessionOutcome): TargetLine[] {
	const { native, defaults } = outcome;
	const where = `${outcome.session} @${outcome.window / 1000}k`;
	const share = replyShare(defaults.outOfView);
	const nativeShare = replyShare(native.outOfView);
	const lines: TargetLine[] = [
		{
			pass: share <= nativeShare + REPLY_MARGIN + 1e-12,
			text: `${where}: replies with an absent reference ${defaults.outOfView.repliesWithAbsent}/${defaults.outOfView.replies} (${percent(share)}) ≤ native's ${percent(nativeShare)} + ${percent(REPLY_MARGIN)}`,
		},
		{
			pass: defaults.outOfView.editsWithAbsentAnchors <= native.outOfView.editsWithAbsentAnchors + EDIT_MARGIN,
			text: `${where}: edits with absent anchor lines ${defaults.outOfView.editsWithAbsentAnchors}/${defaults.outOfView.edits} ≤ native's ${native.outOfView.editsWithAbsentAnchors} + ${EDIT_MARGIN}`,
		},
		{
			pass: defaults.compactions === 0 && defaults.pastLine === 0,
			text: `${where}: ${defaults.compactions} compactions and ${defaults.pastLine} requests past Pi's line (both 0)`,
		},
	];
	if (outcome.report) {
		const host = costRatios(outcome);
		const rawGap = outcome.report.raw - host.raw;
		const chargedGap = outcome.report.charged - host.charged;
		lines.push({
			pass: Math.abs(rawGap) <= REPORT_AGREEMENT && Math.abs(chargedGap) <= REPORT_AGREEMENT,
			text: `${where}: the report's estimate − host ${signed(rawGap)} raw, ${signed(chargedGap)} charged (each within ±${REPORT_AGREEMENT})`,
		});
	}
	return lines;
}

function signed(value: number): string {
	return `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(3)}`;
}

/** The median charged-cost line of a set's sessions at one window. */
export function medianTarget(label: string, outcomes: readonly SessionOutcome[]): TargetLine | undefined {
	const charged = median(outcomes.map((outcome) => costRatios(outcome).charged));
	const raw = median(outcomes.map((outcome) => costRatios(outcome).raw));
	if (charged === undefined || raw === undefined) return undefined;
	return {
		pass: charged <= CHARGED_MEDIAN_BOUND,
		text: `${label}: median charged cost ${ratio(charged)} native's ≤ ${ratio(CHARGED_MEDIAN_BOUND)} (raw ${ratio(raw)}; ${outcomes.length} sessions)`,
	};
}

/** Every line for a set's sessions, window by window: the median first, then each session's. */
export function targetLines(setLabel: string, outcomes: readonly SessionOutcome[]): string[] {
	const windows = [...new Set(outcomes.map((outcome) => outcome.window))];
	const lines: string[] = [];
	for (const window of windows) {
		const chosen = outcomes.filter((outcome) => outcome.window === window);
		const checks = [
			medianTarget(`${setLabel} @${window / 1000}k`, chosen),
			...chosen.flatMap((outcome) => sessionTargets(outcome)),
		];
		for (const check of checks) if (check) lines.push(`- ${check.pass ? "PASS" : "FAIL"} ${check.text}`);
	}
	return lines;
}
