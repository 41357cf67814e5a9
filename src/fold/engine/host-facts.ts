/**
 * What the engine needs to know about the host for one decision: the
 * serving budget, the prices a commit is weighed with, the size of the
 * system prompt and tool declarations, and the working directory. Plain
 * data, derived here from a model's plain facts (what pi-ai's `Model`
 * carries) so Pi and a replay without Pi derive them the same way.
 */

import type { ModelCost } from "@earendil-works/pi-ai";
import { rateCardFromModelCost } from "../../pricing/rate-card.ts";
import { PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import type { ResolvedOptions } from "../options.ts";
import { providerLimit, servingBudget, type TokenPrices, tokenPrices } from "../policy/budget.ts";

export interface HostFacts {
	/** Serving budget (estimated tokens): Pi's compaction line; undefined when the window is unknown. */
	budget: number | undefined;
	/** The provider's hard limit, where the fence refuses a request; the budget when not given. */
	limit?: number;
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

/** A tool as the provider sees it declared: name, description, parameter schema. */
export interface ToolDeclaration {
	name: string;
	description?: string;
	parameters?: unknown;
}

/**
 * Estimated tokens the tool declarations add to every request: Pi's chars/4
 * over each declaration's JSON. Pi's own context reading leaves them out,
 * yet the provider bills them and counts them against the window.
 */
export function toolDeclarationTokens(tools: readonly ToolDeclaration[]): number {
	let chars = 0;
	for (const tool of tools)
		chars += JSON.stringify({
			name: tool.name,
			description: tool.description ?? "",
			parameters: tool.parameters ?? {},
		}).length;
	return Math.ceil(chars / PI_CHARS_PER_TOKEN);
}

/** What the host knows beyond the model: the declared tools' size and Pi's compaction reserve, when known. */
export interface RequestFacts {
	toolTokens?: number;
	reserveTokens?: number;
}

/**
 * Host facts for a request served by `model` with `systemPrompt` (undefined
 * model: budget unknown, default prices). The fixed part counts the tool
 * declarations; the budget stops at Pi's compaction line.
 */
export function modelHostFacts(
	model: ModelFacts | undefined,
	options: Pick<ResolvedOptions, "providerTotalWindow">,
	systemPrompt: string,
	cwd: string,
	facts: RequestFacts = {},
): HostFacts {
	const toolTokens = facts.toolTokens ?? 0;
	const budgetFacts = {
		tokens: null,
		descriptor: model?.contextWindow,
		providerTotalWindow: options.providerTotalWindow,
		outputReservation: model?.maxTokens,
		...(facts.reserveTokens === undefined ? {} : { reserveTokens: facts.reserveTokens }),
	};
	const limit = providerLimit(budgetFacts);
	return {
		budget: servingBudget(budgetFacts),
		...(limit === undefined ? {} : { limit }),
		prices: tokenPrices(model?.cost ? rateCardFromModelCost(model.id, model.cost, { api: model.api }) : undefined),
		fixedTokens: textTokens(systemPrompt) + toolTokens,
		cwd,
	};
}
