/**
 * How the host-replay bench tells its extension (inside Pi) what to serve and
 * which arm to set up: the environment variables, the serve plan's JSON
 * shape, the arm setups and their validation.
 *
 * Owns the wire between the two processes and nothing else; both sides import
 * it, so a renamed field cannot drift between them.
 */

import type { ToolResultMessage } from "@earendil-works/pi-ai";
import type { PiFoldOptions } from "../../src/index.ts";

/** Path of the serve plan (JSON `ServePlan`) the extension reads at load. */
export const PLAN_ENV = "PI_FOLD_HOST_REPLAY_PLAN";
/** JSON `ArmSetup`: what the extension registers besides the recorded tools. */
export const ARM_ENV = "PI_FOLD_HOST_REPLAY_ARM";
/** Path the extension writes `{"ok":true}` or `{"ok":false,"message":…}` to after registering the arm. */
export const STATUS_ENV = "PI_FOLD_HOST_REPLAY_STATUS";

/** One recorded tool result, as the replacement tool returns it. */
export interface ServedResult {
	content: ToolResultMessage["content"];
	isError: boolean;
	details?: unknown;
}

/** One recorded `!cmd` run, served through Pi's `user_bash` event. */
export interface ServedBash {
	command: string;
	output: string;
	exitCode: number | undefined;
	cancelled: boolean;
	truncated: boolean;
}

/** Everything the extension serves, from the recorded session. */
export interface ServePlan {
	/** Every tool name the recorded replies call: each is registered, replacing Pi's built-in of that name. */
	toolNames: string[];
	/** The recorded result of each answered tool call, by call id. */
	results: Record<string, ServedResult>;
	/** User text typed while a run was going: steered in when the call with this id is served. */
	steers: Record<string, string>;
	/** Recorded `!cmd` runs, in order. */
	bash: ServedBash[];
}

/** The price-blind reference: past `triggerTokens`, stub everything older than a `tailTokens` fresh tail. */
export interface ReferenceSetup {
	triggerTokens: number;
	tailTokens: number;
}

/** What an arm registers: nothing (Pi native), the whole package, or the price-blind reference. */
export type ArmSetup =
	| { kind: "native" }
	| { kind: "pi-fold"; options?: PiFoldOptions }
	| ({ kind: "reference" } & ReferenceSetup);

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readJson(env: NodeJS.ProcessEnv, name: string): unknown {
	const raw = env[name];
	if (raw === undefined) throw new Error(`host-replay extension: ${name} is not set`);
	return JSON.parse(raw) as unknown;
}

/** The arm setup from the environment; throws a named error when it is missing or malformed. */
export function parseArmSetup(env: NodeJS.ProcessEnv): ArmSetup {
	const value = readJson(env, ARM_ENV);
	if (!isRecord(value)) throw new Error(`host-replay extension: ${ARM_ENV} must be a JSON object`);
	if (value.kind === "native") return { kind: "native" };
	if (value.kind === "pi-fold")
		return isRecord(value.options) ? { kind: "pi-fold", options: value.options } : { kind: "pi-fold" };
	if (value.kind === "reference") {
		const { triggerTokens, tailTokens } = value;
		if (!Number.isInteger(triggerTokens) || !Number.isInteger(tailTokens) || Number(tailTokens) < 0)
			throw new Error(`host-replay extension: reference arm needs integer triggerTokens and tailTokens`);
		return { kind: "reference", triggerTokens: Number(triggerTokens), tailTokens: Number(tailTokens) };
	}
	throw new Error(`host-replay extension: unknown arm kind ${JSON.stringify(value.kind)}`);
}

/** The environment a run's Pi child gets for the extension. */
export function armEnv(planFile: string, arm: ArmSetup, statusFile: string): Record<string, string> {
	return { [PLAN_ENV]: planFile, [ARM_ENV]: JSON.stringify(arm), [STATUS_ENV]: statusFile };
}
