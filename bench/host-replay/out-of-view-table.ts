/**
 * The out-of-view table (pure): per session, window and arm, what the
 * window hid from the replies (replies with an absent reference, references
 * shown only in a brief or summary, edits whose anchor lines were absent, the
 * median age of absent references) and the cost raw and charged, each beside
 * native's. The real-Pi report and the quick loop print the same table.
 */

import type { HiddenCharge } from "../../src/cost/out-of-view/charge.ts";
import type { ReplaySession } from "./sessions.ts";
import { type ArmOutcome, replyShare } from "./targets.ts";

export interface ScoredArm {
	arm: string;
	outcome: ArmOutcome;
	charge: HiddenCharge;
}

export interface ScoredSession {
	session: ReplaySession;
	window: number;
	arms: readonly ScoredArm[];
}

const count = (value: number) => value.toLocaleString("en-US");
const dollars = (value: number) => `$${value.toFixed(2)}`;
const ratio = (value: number | undefined) =>
	value === undefined || !Number.isFinite(value) ? "—" : `${value.toFixed(2)}×`;

/** The table's header and rule. */
export const OUT_OF_VIEW_HEADER = [
	"| session | window | arm | replies | with an absent reference | only in a brief or summary | edits with absent anchors | median age of absent (replies) | searches + peeks charged | raw cost | charged cost | raw / native | charged / native |",
	"| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];

/** One row per arm of each session and window (native first, as given). */
export function outOfViewTable(rows: readonly ScoredSession[]): string[] {
	const lines = [...OUT_OF_VIEW_HEADER];
	for (const row of rows) {
		const native = row.arms.find((arm) => arm.arm === "native")?.outcome;
		for (const { arm, outcome, charge } of row.arms) {
			const view = outcome.outOfView;
			const name = row.session.origin === "generated" ? `${row.session.name} (generated)` : row.session.name;
			lines.push(
				`| ${[
					name,
					arm === "sanity" ? "endless" : `${row.window / 1000}k`,
					arm,
					count(view.replies),
					`${count(view.repliesWithAbsent)} (${(100 * replyShare(view)).toFixed(1)}%)`,
					count(view.repliesWithBriefOnly),
					`${view.editsWithAbsentAnchors} / ${view.edits}`,
					view.medianAbsentAge === undefined ? "—" : String(view.medianAbsentAge),
					count(charge.requests),
					dollars(outcome.rawCost),
					dollars(outcome.chargedCost),
					ratio(native ? outcome.rawCost / native.rawCost : undefined),
					ratio(native ? outcome.chargedCost / native.chargedCost : undefined),
				].join(" | ")} |`,
			);
		}
	}
	return lines;
}
