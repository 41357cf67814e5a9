/**
 * How the bench process tells the bench extension (inside Pi) what to run:
 * the environment variables, their JSON shapes and their validation.
 *
 * Owns the wire between the two processes and nothing else; both sides import
 * it, so a renamed field cannot drift between them.
 */

import type { PiFoldOptions } from "../../src/index.ts";
import type { Workload } from "./workload.ts";

/** JSON `Workload`: seed, stage count, payload bounds, optional size bands and turns. */
export const WORKLOAD_ENV = "PI_FOLD_BENCH_WORKLOAD";
/** JSON `ArmSetup`: which engines the extension registers. */
export const ARM_ENV = "PI_FOLD_BENCH_ARM";
/** Path the extension writes `{"ok":true}` or `{"ok":false,"message":…}` to after registering the arm. */
export const STATUS_ENV = "PI_FOLD_BENCH_STATUS";

/** What an arm registers: nothing (Pi native), the whole package, or the compactor alone. */
export type ArmSetup =
	| { kind: "native" }
	| { kind: "pi-fold"; options?: PiFoldOptions }
	| { kind: "compactor"; options?: Pick<PiFoldOptions, "compaction"> };

function readJson(env: NodeJS.ProcessEnv, name: string): unknown {
	const raw = env[name];
	if (raw === undefined) throw new Error(`bench extension: ${name} is not set`);
	return JSON.parse(raw) as unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The workload from the environment; throws a named error when it is missing or malformed. */
export function parseWorkload(env: NodeJS.ProcessEnv): Workload {
	const value = readJson(env, WORKLOAD_ENV);
	const fields = ["seed", "stages", "minBytes", "maxBytes"] as const;
	if (!isRecord(value) || !fields.every((field) => Number.isInteger(value[field])))
		throw new Error(`bench extension: ${WORKLOAD_ENV} must be {seed, stages, minBytes, maxBytes} integers`);
	const workload: Workload = {
		seed: Number(value.seed),
		stages: Number(value.stages),
		minBytes: Number(value.minBytes),
		maxBytes: Number(value.maxBytes),
	};
	if (workload.stages < 1 || workload.minBytes < 1 || workload.maxBytes < workload.minBytes)
		throw new Error(`bench extension: ${WORKLOAD_ENV} has empty bounds`);
	if (value.turns !== undefined) {
		if (!Number.isInteger(value.turns) || Number(value.turns) < 1)
			throw new Error(`bench extension: ${WORKLOAD_ENV} turns must be a positive integer`);
		workload.turns = Number(value.turns);
	}
	if (value.bands !== undefined) {
		const bands = value.bands;
		const valid =
			Array.isArray(bands) &&
			bands.every(
				(band) =>
					isRecord(band) &&
					typeof band.share === "number" &&
					Number.isInteger(band.minBytes) &&
					Number.isInteger(band.maxBytes) &&
					Number(band.minBytes) >= 1 &&
					Number(band.maxBytes) >= Number(band.minBytes),
			);
		if (!valid) throw new Error(`bench extension: ${WORKLOAD_ENV} bands must be [{share, minBytes, maxBytes}]`);
		workload.bands = bands as Workload["bands"];
	}
	return workload;
}

/** The arm setup from the environment. Options pass through unchecked: validating them is the arm's job. */
export function parseArmSetup(env: NodeJS.ProcessEnv): ArmSetup {
	const value = readJson(env, ARM_ENV);
	if (!isRecord(value)) throw new Error(`bench extension: ${ARM_ENV} must be a JSON object`);
	if (value.kind === "native") return { kind: "native" };
	const options = isRecord(value.options) ? value.options : undefined;
	if (value.kind === "pi-fold") return options ? { kind: "pi-fold", options } : { kind: "pi-fold" };
	if (value.kind === "compactor") return options ? { kind: "compactor", options } : { kind: "compactor" };
	throw new Error(`bench extension: unknown arm kind ${JSON.stringify(value.kind)}`);
}

/** The environment a run's Pi child gets for the extension. */
export function benchEnv(workload: Workload, arm: ArmSetup, statusFile: string): Record<string, string> {
	return { [WORKLOAD_ENV]: JSON.stringify(workload), [ARM_ENV]: JSON.stringify(arm), [STATUS_ENV]: statusFile };
}
