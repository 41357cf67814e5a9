/**
 * What the engine needs to know about the host for one decision: the
 * serving budget, the prices a commit is weighed with, the size of the
 * system prompt and tool declarations, and the working directory. Plain
 * data, derived here from a model's plain facts (what pi-ai's `Model`
 * carries) so Pi and a replay without Pi derive them the same way.
 */

import type { ModelCost } from "@earendil-works/pi-ai";
import { rateCardFromModelCost } from "../../cost/rate-card.ts";
import { PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import type { ResolvedOptions } from "../options.ts";
import { servingBudget, type TokenPrices, tokenPrices } from "../policy/budget.ts";

export interface HostFacts {
	/** Serving budget (estimated tokens), undefined when the window is unknown. */
	budget: number | undefined;
	prices: TokenPrices;
	/** Estimated tokens of the system prompt and tool declarations. */
	fixedTokens: number;
	cwd: string;
}

/** The facts of the model serving the next request, as pi-ai's `Model` carries them. */
export interface ModelFacts {
	id: string;
	api?: string;
	contextWindow?: number;
	maxTokens?: number;
	cost?: ModelCost;
}

/** Pi's estimate of a text's tokens (chars/4), as it sizes the system prompt. */
export function textTokens(text: string): number {
	return Math.ceil(text.length / PI_CHARS_PER_TOKEN);
}

/** Host facts for a request served by `model` with `systemPrompt` (undefined model: budget unknown, default prices). */
export function modelHostFacts(
	model: ModelFacts | undefined,
	options: Pick<ResolvedOptions, "providerTotalWindow">,
	systemPrompt: string,
	cwd: string,
): HostFacts {
	return {
		budget: servingBudget({
			tokens: null,
			descriptor: model?.contextWindow,
			providerTotalWindow: options.providerTotalWindow,
			outputReservation: model?.maxTokens,
		}),
		prices: tokenPrices(model?.cost ? rateCardFromModelCost(model.id, model.cost, { api: model.api }) : undefined),
		fixedTokens: textTokens(systemPrompt),
		cwd,
	};
}
