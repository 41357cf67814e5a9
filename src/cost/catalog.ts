/**
 * Rate cards by name: the named cards in `src/pricing/rate-card.ts`, or `<provider>/<model>`
 * resolved against the model catalog bundled with the installed pi-ai.
 *
 * The catalog is static data shipped with the dependency (no network, no
 * credentials), so a lookup is a pure function of the installed pi-ai version.
 */

import type { Api, Model } from "@earendil-works/pi-ai";
import { type BuiltinProvider, getBuiltinModels, getBuiltinProviders } from "@earendil-works/pi-ai/providers/all";
import { NAMED_RATE_CARDS, namedRateCard, type RateCard, rateCardFromModelCost } from "../pricing/rate-card.ts";

/** Separator between provider and model id in a catalog card name. */
export const CATALOG_NAME_SEPARATOR = "/";

const modelsByProvider = new Map<string, ReadonlyMap<string, Model<Api>>>();

/** The catalog entry for a chat model, or undefined when the installed pi-ai does not know it. */
export function catalogModel(provider: string, modelId: string): Model<Api> | undefined {
	let models = modelsByProvider.get(provider);
	if (!models) {
		const known = (getBuiltinProviders() as readonly string[]).includes(provider);
		const list = known ? getBuiltinModels(provider as BuiltinProvider) : [];
		models = new Map(list.map((model) => [model.id, model as Model<Api>]));
		modelsByProvider.set(provider, models);
	}
	return models.get(modelId);
}

/** The card Pi's catalog implies for a model (its tiers included), or undefined when unknown. */
export function catalogRateCard(provider: string, modelId: string): RateCard | undefined {
	const model = catalogModel(provider, modelId);
	if (!model) return undefined;
	return rateCardFromModelCost(`${provider}${CATALOG_NAME_SEPARATOR}${modelId}`, model.cost, {
		api: model.api,
		source: "Pi model catalog",
	});
}

/** Prompt-cache lifetime (seconds) the catalog gives for a model's default retention, if known. */
export function catalogCacheTtlSeconds(provider: string, modelId: string): number | undefined {
	return catalogModel(provider, modelId)?.promptCache?.short;
}

/** Resolve a `--rate-card` value: a named card first, then `<provider>/<model>` from the catalog. */
export function resolveRateCard(name: string): RateCard | undefined {
	const named = namedRateCard(name);
	if (named) return named;
	const at = name.indexOf(CATALOG_NAME_SEPARATOR);
	if (at <= 0 || at === name.length - 1) return undefined;
	return catalogRateCard(name.slice(0, at), name.slice(at + 1));
}

/** Names `resolveRateCard` accepts besides catalog models, for error messages and help. */
export function namedRateCardNames(): string[] {
	return Object.keys(NAMED_RATE_CARDS).sort();
}
