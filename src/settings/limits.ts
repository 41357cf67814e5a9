/**
 * Settings that are valid on their own but wrong for the model in use: a
 * serving window (`piFold.providerTotalWindow`) or a token threshold
 * (`compaction.tokenThresholds`) larger than the model's context window.
 * Checked at session start and again when the model changes, since the same
 * file can be right for one model and wrong for the next.
 *
 * Both are warned about, not refused: the spec allows a total window above
 * the per-request descriptor a provider advertises (it may understate the
 * real ceiling), so pi-fold keeps the value the person set and says what it
 * means: requests the fence lets through may be refused by the provider, and
 * a threshold above the window is never reached (and holds back Pi's own).
 */

import type { SettingsProblem } from "../host/settings-notice.ts";

const integer = new Intl.NumberFormat("en-US");

export interface ModelWindow {
	/** `provider/model`. */
	key: string;
	contextWindow: number;
}

export interface WindowSettings {
	providerTotalWindow?: { value: number; path: string };
	/** The active model's token threshold, when one is set. */
	tokenThreshold?: { value: number; path: string };
}

/** Problems of settings that exceed the model's window; none when the window is unknown. */
export function windowProblems(settings: WindowSettings, model: ModelWindow | undefined): SettingsProblem[] {
	if (!model || !(model.contextWindow > 0)) return [];
	const window = `${model.key}'s context window of ${integer.format(model.contextWindow)} tokens`;
	const problems: SettingsProblem[] = [];
	const total = settings.providerTotalWindow;
	if (total && total.value > model.contextWindow) {
		problems.push({
			path: total.path,
			key: "piFold.providerTotalWindow",
			value: total.value,
			reason: `is larger than ${window}; pi-fold would send requests the provider may refuse. Remove it unless the provider serves more than the model's listed window`,
			using: `${integer.format(total.value)} as set`,
		});
	}
	const threshold = settings.tokenThreshold;
	if (threshold && threshold.value > model.contextWindow) {
		problems.push({
			path: threshold.path,
			key: `compaction.tokenThresholds[${JSON.stringify(model.key)}]`,
			value: threshold.value,
			reason: `is larger than ${window}: it is never reached, and while it is not reached Pi's own threshold compaction is held back, so the session compacts only when a request overflows`,
			using: `${integer.format(threshold.value)} as set`,
		});
	}
	return problems;
}
