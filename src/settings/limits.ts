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
 * means, in the figures it then uses: the budget (the serving budget, which
 * Pi's compaction line bounds whatever the total says) and the fence's limit
 * (which the total raises, so requests past the window are sent and may be
 * refused by the provider); a threshold above the window is never reached
 * (and holds back Pi's own).
 */

import { compactionModelKey } from "../compaction/settings/settings.ts";
import { piReserveTokens } from "../fold/pi/overflow.ts";
import { type BudgetFacts, providerLimit, servingBudget } from "../fold/policy/budget.ts";
import type { SettingsProblem } from "../host/settings-notice.ts";

const integer = new Intl.NumberFormat("en-US");

export interface ModelWindow {
	/** `provider/model`. */
	key: string;
	contextWindow: number;
	/** The model's output limit (the serving budget's output reservation under a total window). */
	maxTokens?: number;
	/** Pi's compaction reserve for the model, when a settings file sets one (else Pi's default). */
	reserveTokens?: number;
}

/**
 * The active model as the checks read it: its window, output limit and Pi's
 * compaction reserve for it from the settings files' `compaction` sections
 * (global, then project: the later one wins, as in Pi).
 */
export function modelWindow(
	model: { provider: string; id: string; contextWindow: number; maxTokens?: number },
	compactionSections: readonly { section: unknown }[],
): ModelWindow {
	let reserveTokens: number | undefined;
	for (const layer of compactionSections)
		reserveTokens = piReserveTokens({ compaction: layer.section }, model) ?? reserveTokens;
	return {
		key: compactionModelKey(model.provider, model.id),
		contextWindow: model.contextWindow,
		...(model.maxTokens === undefined ? {} : { maxTokens: model.maxTokens }),
		...(reserveTokens === undefined ? {} : { reserveTokens }),
	};
}

/** What a `providerTotalWindow` above the model's window does: the budget pi-fold keeps, the limit the fence moves to. */
function totalWindowEffect(total: number, model: ModelWindow): string {
	const facts: BudgetFacts = {
		tokens: null,
		descriptor: model.contextWindow,
		providerTotalWindow: total,
		outputReservation: model.maxTokens,
		...(model.reserveTokens === undefined ? {} : { reserveTokens: model.reserveTokens }),
	};
	const budget = servingBudget(facts) ?? 0;
	const line = servingBudget({ ...facts, providerTotalWindow: undefined }) ?? 0;
	const limit = providerLimit(facts) ?? total;
	const why =
		budget === line
			? "Pi's compaction line, the window less Pi's reserve"
			: `the total less the model's ${integer.format(model.maxTokens ?? 0)}-token output`;
	return `the budget stays ${integer.format(budget)} tokens (${why}); only the fence moves, so requests of up to ${integer.format(limit)} tokens are sent instead of refused, and the provider may refuse them`;
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
			reason: `is larger than ${window}: ${totalWindowEffect(total.value, model)}. Remove it unless the provider serves more than the model's listed window`,
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
