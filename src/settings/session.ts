/**
 * Settings at session start: the `piFold` options a session reads from Pi's
 * settings files are applied to the live options, and every settings problem
 * (a refused `piFold` value, a registration option edited since load, a
 * clamped `compaction` value, a window setting larger than the model's) is
 * told once per session in one notice (src/host/settings-notice.ts). A model switch checks the
 * window settings again and tells only what is new.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CompactionHooks } from "../compaction/pi/hook.ts";
import { compactionModelKey, thresholdForModel } from "../compaction/settings/settings.ts";
import type { PiFoldOptions, ResolvedOptions } from "../fold/options.ts";
import {
	readLayers,
	registrationDrift,
	resolveWithSettings,
	type SettingsLayer,
	withSessionOptions,
} from "../fold/pi/settings-file.ts";
import { showProblem } from "../host/output.ts";
import { type SettingsProblem, settingsNotice } from "../host/settings-notice.ts";
import { modelWindow, windowProblems } from "./limits.ts";
import { compactionOrigin, foldOptionOrigin, originPath } from "./origin.ts";

export interface SessionSettingsDeps {
	/** Options the host passed in code. */
	code: PiFoldOptions;
	/** The options in force (the runtime's). */
	live: () => ResolvedOptions;
	/** Put new options in force: the session options read at session start, the rest as they were. */
	configure: (options: ResolvedOptions) => void;
	compaction: Pick<CompactionHooks, "sources" | "settingsProblems">;
}

/** Problems already told, by session: a notice never repeats within one. */
class Told {
	private readonly bySession = new Map<string, Set<string>>();

	/** The problems not yet told in this session (and now marked told). */
	fresh(sessionId: string, problems: readonly SettingsProblem[]): SettingsProblem[] {
		const told = this.bySession.get(sessionId) ?? new Set<string>();
		this.bySession.set(sessionId, told);
		return problems.filter((problem) => {
			const key = `${problem.path}\n${problem.key}\n${problem.reason}`;
			if (told.has(key)) return false;
			told.add(key);
			return true;
		});
	}
}

function show(ctx: ExtensionContext, told: Told, problems: readonly SettingsProblem[]): void {
	const notice = settingsNotice(told.fresh(ctx.sessionManager.getSessionId(), problems));
	if (notice) showProblem(ctx, notice.text, notice.oneLine);
}

/** Window settings larger than the active model's window. */
function limitProblems(
	ctx: ExtensionContext,
	deps: SessionSettingsDeps,
	layers: readonly SettingsLayer[],
	refused: readonly SettingsProblem[],
): SettingsProblem[] {
	const model = ctx.model;
	if (!model) return [];
	const key = compactionModelKey(model.provider, model.id);
	const total = deps.live().providerTotalWindow;
	const refusedKeys = new Set(refused.map((problem) => `${problem.path}\n${problem.key}`));
	const totalOrigin = foldOptionOrigin(
		"providerTotalWindow",
		Object.hasOwn(deps.code, "providerTotalWindow"),
		layers,
		refusedKeys,
	);
	const sources = deps.compaction.sources(ctx);
	const threshold = thresholdForModel(sources.settings.settings, key);
	const inCode = deps.code.compaction?.tokenThresholds?.[key] !== undefined;
	return windowProblems(
		{
			...(total !== undefined ? { providerTotalWindow: { value: total, path: originPath(totalOrigin) } } : {}),
			...(threshold?.kind === "tokens"
				? {
						tokenThreshold: {
							value: threshold.tokens,
							path: originPath(compactionOrigin(["tokenThresholds", key], inCode, sources.layers)),
						},
					}
				: {}),
		},
		modelWindow(model, sources.layers),
	);
}

/**
 * Register the session-start settings pass. Call before the fold runtime
 * registers its own `session_start` handler, so the state it rebuilds sees
 * these options.
 */
export function registerSessionSettings(pi: ExtensionAPI, deps: SessionSettingsDeps): void {
	const told = new Told();
	pi.on("session_start", (_event, ctx) => {
		const layers = readLayers(ctx);
		const { resolved, problems } = resolveWithSettings(deps.code, layers, "session");
		deps.configure(withSessionOptions(deps.live(), resolved));
		const global = layers[0]?.path ?? "settings.json";
		show(ctx, told, [
			...problems,
			...registrationDrift(deps.live(), resolved, global),
			...deps.compaction.settingsProblems(ctx),
			...limitProblems(ctx, deps, layers, problems),
		]);
	});
	pi.on("model_select", (_event, ctx) => {
		const layers = readLayers(ctx);
		const { problems } = resolveWithSettings(deps.code, layers, "session");
		show(ctx, told, limitProblems(ctx, deps, layers, problems));
	});
}
