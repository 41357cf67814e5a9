/**
 * What pi-fold would have saved on a session recorded without it: the active
 * branch's recorded prompts and the prompts pi-fold's ladder would have sent
 * instead (`fold-replay.ts`), both through one prefix-cache model and each
 * request's own rate card, so the two sequences differ only in what they sent.
 *
 * Prompts are calibrated to provider tokens with the log's own fit
 * (`calibrateRequests` over the recorded requests), the same fit for both.
 * Pure over the branch's entries.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { toolDeclarationChars } from "../fold/actions/tool-schema.ts";
import type { HostFacts } from "../fold/engine/host-facts.ts";
import { type ResolvedOptions, resolveOptions } from "../fold/options.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../fold/policy/budget.ts";
import { type Calibration, PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import { catalogCacheTtlSeconds, catalogModel } from "./catalog.ts";
import { cardForModelKey, type HostFor, hostFacts, modelKeyOf, replayBranch } from "./fold-replay.ts";
import {
	NATIVE_SUMMARY_CHARS,
	type NativeCompaction,
	PI_DEFAULT_KEEP_RECENT_TOKENS,
	replayNativeCompaction,
	summariesCost,
} from "./native-replay.ts";
import { type ArmScore, armEvents, projectionCollector, scoreArm, sentCollector } from "./out-of-view/arm-score.ts";
import { type PrefixCacheOptions, simulatePrefixCache } from "./prefix-cache.ts";
import { priceRequest, simulatedUsage } from "./price.ts";
import {
	calibrateRequests,
	outputTokens,
	promptRequests,
	type SessionRequest,
	sessionRequests,
} from "./session-requests.ts";

/** Minimum cacheable prefix (Anthropic's and OpenAI's documented floor), as in the prefix-cache benchmark. */
export const MIN_CACHED_TOKENS = 1024;

/**
 * Requests a calibration must rest on before its scale is read as the
 * provider's tokens per estimated token of the declaration. A fit over a
 * handful of small prompts mostly measures what the log does not show (the
 * system prompt, Pi's own tools): on the six-request sample it reads 3.5
 * provider tokens per estimated token, 1.1 characters a token, which no
 * tokenizer does.
 */
export const MIN_TRUSTED_CALIBRATION_POINTS = 20;

/**
 * The context tool's declaration and prompt line in provider tokens, as every
 * request pi-fold shapes carries them: Pi's estimate of the characters the
 * tool adds to a real request (test/e2e/report-runtime.test.ts measures the
 * request with and without pi-fold), at the log's scale when the fit is
 * trusted, else as estimated.
 */
export function declarationTokens(options: ReturnType<typeof resolveOptions>, calibration: Calibration): number {
	const estimated = Math.ceil(toolDeclarationChars(options.toolName, options.toolActions) / PI_CHARS_PER_TOKEN);
	const scale = calibration.points >= MIN_TRUSTED_CALIBRATION_POINTS ? calibration.scale : 1;
	return Math.round(estimated * scale);
}

/** One modelled request. */
export interface ModelledRequest {
	promptTokens: number;
	cachedTokens: number;
	/** Prompt tokens not served from cache (fresh input or cache writes). */
	uncachedTokens: number;
	/** USD at the request's own card and tier. */
	cost: number;
}

/** A request sequence under the cache model. */
export interface ModelledSequence {
	requests: ModelledRequest[];
	promptTokens: number;
	cachedTokens: number;
	uncachedTokens: number;
	cost: number;
	peakPromptTokens: number;
	/** Requests priced with the fallback card because the catalog does not know their model. */
	fallbackPriced: number;
}

export interface ProjectedSavings {
	/** The model that served most requests, and the cache model used. */
	mainModelKey: string;
	/** Estimate → provider tokens, fitted on the log's recorded prompts (identity, with no points, when none recorded one). */
	calibration: Calibration;
	/** Provider tokens the context tool's declaration adds to each request pi-fold shapes. */
	declarationTokens: number;
	cache: PrefixCacheOptions;
	/** Serving budget of the main model (tokens), when the catalog knows it. */
	budget: number | undefined;
	/** The branch's prompts as recorded, under the cache model. */
	recorded: ModelledSequence;
	/**
	 * What Pi alone would have sent (the baseline "saved" is measured against): the recorded
	 * branch with Pi's threshold compaction replayed where the log has none (at a window the caller
	 * names, replayed afresh in place of the log's), its summaries billed.
	 */
	native: ModelledSequence & { compactions: number; summaries: number; settings: NativeCompaction };
	/** Name of the card the main model's requests were priced with. */
	card: string;
	/**
	 * What pi-fold's ladder would have sent, under the same model, with Pi's threshold compaction
	 * where the folded window still crossed Pi's line and no commit got it under (summaries billed).
	 */
	projected: ModelledSequence & {
		compactions: number;
		/** Pi's threshold checks a ladder commit answered instead of a compaction. */
		cancelledCompactions: number;
		/** The model summarizer's requests, billed in `cost`. */
		summarizerRequests: number;
	};
	commits: number;
	folds: number;
	/** Index of the first request each projected commit shaped. */
	commitRequests: number[];
	/** Rewrites the replay could not attribute (0 unless the mirror drifted from the runtime). */
	unattributed: number;
	/**
	 * What each column's window hid from the replies it served (out-of-view references), and the
	 * charge for getting it back (cost/out-of-view/charge.ts), the same rule for both.
	 */
	outOfView: { native: ArmScore; projected: ArmScore };
}

/** A column's cost with its hidden references charged. */
export function chargedCost(sequence: { cost: number }, arm: ArmScore): number {
	return sequence.cost + arm.charge.cost;
}

/** Prompt tokens of each request by the entry id of the reply it produced. */
function promptTokensByEntry(requests: readonly SessionRequest[], sequence: ModelledSequence): Map<string, number> {
	const out = new Map<string, number>();
	requests.forEach((request, index) => {
		const row = sequence.requests[index];
		if (row) out.set(request.entryId, row.promptTokens);
	});
	return out;
}

/** The cache model a log is priced under: its main model's catalog time-to-live, a 1,024-token minimum. */
export function cacheOptionsFor(mainModelKey: string): PrefixCacheOptions {
	const at = mainModelKey.indexOf("/");
	const ttl = at > 0 ? catalogCacheTtlSeconds(mainModelKey.slice(0, at), mainModelKey.slice(at + 1)) : undefined;
	return ttl === undefined
		? { minCachedTokens: MIN_CACHED_TOKENS }
		: { minCachedTokens: MIN_CACHED_TOKENS, ttlSeconds: ttl };
}

/**
 * Price a request sequence under the cache model, request by request. A
 * failed reply is billed nothing and caches nothing (a provider that failed
 * the request kept no prefix of it); its row reads zero. Output is the
 * recorded output, else Pi's estimate of the reply at the calibration's scale.
 */
export function modelSequence(
	all: readonly SessionRequest[],
	calibration: Calibration,
	cache: PrefixCacheOptions,
	extraFixedTokens = 0,
): ModelledSequence {
	const requests = all.filter((request) => !request.failed);
	const modelled = simulatePrefixCache(promptRequests(requests, calibration, extraFixedTokens), cache);
	const sequence: ModelledSequence = {
		requests: [],
		promptTokens: modelled.promptTokens,
		cachedTokens: modelled.cachedTokens,
		uncachedTokens: modelled.freshTokens,
		cost: 0,
		peakPromptTokens: 0,
		fallbackPriced: 0,
	};
	modelled.requests.forEach((cached, index) => {
		const request = requests[index];
		if (!request) return;
		const { card, fallback } = cardForModelKey(request.modelKey);
		if (fallback) sequence.fallbackPriced++;
		const cost = priceRequest(card, simulatedUsage(card, cached, outputTokens(request, calibration))).cost.total;
		sequence.cost += cost;
		sequence.peakPromptTokens = Math.max(sequence.peakPromptTokens, cached.promptTokens);
		sequence.requests.push({
			promptTokens: cached.promptTokens,
			cachedTokens: cached.cachedTokens,
			uncachedTokens: cached.freshTokens,
			cost,
		});
	});
	// Rows stay one per request (commit indices point into them): a failed one reads zero.
	if (requests.length < all.length) {
		const billed = sequence.requests;
		let next = 0;
		sequence.requests = all.map((request) =>
			request.failed
				? { promptTokens: 0, cachedTokens: 0, uncachedTokens: 0, cost: 0 }
				: (billed[next++] ?? { promptTokens: 0, cachedTokens: 0, uncachedTokens: 0, cost: 0 }),
		);
	}
	return sequence;
}

/** The model that served most requests on the branch ("/" when none). */
export function mainModel(entries: readonly SessionEntry[]): string {
	const counts = new Map<string, number>();
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		const key = modelKeyOf(entry);
		counts.set(key, (counts.get(key) ?? 0) + 1);
	}
	return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? "/";
}

/** What every replay of one log shares: its recorded requests, calibration, cache model and host facts. */
export interface LogSetup {
	logged: SessionRequest[];
	calibration: Calibration;
	mainModelKey: string;
	cache: PrefixCacheOptions;
	/** Estimated tokens standing for the system prompt and tool declarations in the ladder's reading. */
	fixedTokens: number;
	/** Host facts per serving model, built once per model. */
	hostFor: HostFor;
}

/** Host facts per serving model, built once per model; `contextWindow` overrides the catalog's window. */
function hostsPerModel(fixedTokens: number, cwd: string, contextWindow?: number): HostFor {
	const hosts = new Map<string, HostFacts>();
	return (entry) => {
		const key = modelKeyOf(entry);
		let host = hosts.get(key);
		if (!host) {
			host = hostFacts(key, fixedTokens, cwd, contextWindow);
			hosts.set(key, host);
		}
		return host;
	};
}

/** The setup of a log's replays: recorded requests, their calibration, the main model's cache model and host facts. */
export function logSetup(branch: readonly SessionEntry[], cwd: string): LogSetup {
	const logged = sessionRequests(branch);
	const calibration = calibrateRequests(logged);
	const mainModelKey = mainModel(branch);
	// The calibration's overhead is in provider tokens; the ladder reads Pi's estimate.
	const fixedTokens = Math.max(0, Math.round(calibration.overhead / calibration.scale));
	const hostFor = hostsPerModel(fixedTokens, cwd);
	return { logged, calibration, mainModelKey, cache: cacheOptionsFor(mainModelKey), fixedTokens, hostFor };
}

/** What a caller may vary of the ladder's policy (the tuning front only): see `ResolvedOptions.workingSetShare`. */
export type SavingsPolicy = Pick<ResolvedOptions, "workingSetShare">;

/**
 * Replay the active branch through pi-fold's default ladder and through Pi's own compaction,
 * and price the sequences. `compaction` overrides Pi's settings (default: the main model's
 * catalog window, Pi's default reserve and kept tail, a summary of realistic size); a
 * `contextWindow` given there is the ladder's serving budget too, and Pi alone meets its
 * threshold afresh at it (the log's own compactions were made at another window).
 * `policy.workingSetShare` replaces the working-set constant (the tuning front only).
 */
export async function projectSavings(
	branch: readonly SessionEntry[],
	cwd: string,
	compaction: Partial<NativeCompaction> = {},
	policy: SavingsPolicy = {},
): Promise<ProjectedSavings> {
	const { logged, calibration, mainModelKey, cache, fixedTokens, hostFor: catalogHost } = logSetup(branch, cwd);
	const window = compaction.contextWindow;
	const catalogWindow =
		mainModelKey.indexOf("/") > 0
			? catalogModel(
					mainModelKey.slice(0, mainModelKey.indexOf("/")),
					mainModelKey.slice(mainModelKey.indexOf("/") + 1),
				)?.contextWindow
			: undefined;
	const hostFor: HostFor = window === undefined ? catalogHost : hostsPerModel(fixedTokens, cwd, window);
	const settings: NativeCompaction = {
		// A model the catalog does not know gets no compaction (nothing says where its window ends).
		contextWindow: window ?? catalogWindow ?? Number.POSITIVE_INFINITY,
		reserveTokens: compaction.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS,
		keepRecentTokens: compaction.keepRecentTokens ?? PI_DEFAULT_KEEP_RECENT_TOKENS,
		summaryChars: compaction.summaryChars ?? NATIVE_SUMMARY_CHARS,
	};
	// The tuning front varies the working-set share; every other caller leaves it undefined: the constant.
	const options = { ...resolveOptions(), workingSetShare: policy.workingSetShare };
	// Pi's recorded compactions are its own decisions: with pi-fold, the threshold is met again where it comes.
	const unfolded = branch.filter((entry) => entry.type !== "compaction");
	const sent = sentCollector();
	const ladder = await replayBranch(unfolded, "ladder", options, hostFor, { settings, calibration, cwd }, sent.observe);
	// Pi alone keeps the log's compactions (what Pi did) at the log's own window; asked about another
	// window, it meets Pi's threshold afresh too: compactions made at one window are not facts of another,
	// and their summaries' words would hide less than a replayed compaction's (the charged cost reads them).
	const replayed = replayNativeCompaction(window === undefined ? branch : unfolded, settings, calibration);
	const { card } = cardForModelKey(mainModelKey);
	const nativeRequests = sessionRequests(replayed.branch);
	const nativeSequence = modelSequence(nativeRequests, calibration, cache);
	const summaryCost = summariesCost(replayed.summaries, card);
	// Every request pi-fold shapes also carries its tool's declaration and prompt line.
	const declared = declarationTokens(options, calibration);
	const projected = modelSequence(ladder.requests, calibration, cache, declared);
	const rules = { card, scale: calibration.scale };
	const outOfView = {
		native: scoreArm(
			armEvents(branch, projectionCollector(replayed.branch)),
			rules,
			promptTokensByEntry(nativeRequests, nativeSequence),
		),
		projected: scoreArm(armEvents(branch, sent), rules, promptTokensByEntry(ladder.requests, projected)),
	};
	return {
		mainModelKey,
		calibration,
		declarationTokens: declared,
		card: card.name,
		cache,
		budget: hostFacts(mainModelKey, fixedTokens, cwd, window).budget,
		recorded: modelSequence(logged, calibration, cache),
		native: {
			...nativeSequence,
			cost: nativeSequence.cost + summaryCost,
			compactions: replayed.compactions,
			summaries: replayed.summaries.length,
			settings,
		},
		projected: {
			...projected,
			cost: projected.cost + summariesCost([...ladder.summaries, ...ladder.sideRequests], card),
			compactions: ladder.compactions,
			cancelledCompactions: ladder.cancelledCompactions,
			summarizerRequests: ladder.sideRequests.length,
		},
		commits: ladder.commits,
		folds: ladder.folds,
		commitRequests: ladder.commitRequests,
		unattributed: ladder.unattributed,
		outOfView,
	};
}
