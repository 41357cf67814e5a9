/**
 * Bench-only Pi extension of the host replay (never shipped, never loaded by
 * the package). Run with `pi --no-extensions -e bench/host-replay/extension.ts`.
 *
 * Owns the Pi side of one replayed session:
 * - Every tool name the recorded replies call is registered, replacing Pi's
 *   built-in of that name (Pi lets an extension tool override a built-in by
 *   name; docs/extensions.md "Overriding Built-in Tools"). The replacement
 *   keeps the built-in's description, prompt snippet and guidelines, so the
 *   system prompt and tool declarations read as Pi's own, and answers each
 *   call with its recorded result (content, isError, details) by call id.
 *   Nothing runs for real. Its parameters are the built-in's without
 *   required fields: recorded arguments from older Pi versions (an `edit`
 *   with `oldText`/`newText`) must not fail validation.
 * - A steered user message is queued (`deliverAs: "steer"`) when the call
 *   the plan names runs.
 * - `!cmd` runs (the driver's RPC `bash`) get their recorded output through
 *   the `user_bash` event, in order.
 * - Then the arm: nothing (Pi native), `registerPiFold(pi, options)`, or the
 *   price-blind reference (stub drafts at `turn_end`).
 * Whether the arm registered is written to the status file, so a failing arm
 * is reported as failed instead of silently measuring Pi without it.
 */

import { readFileSync, writeFileSync } from "node:fs";
import {
	createBashToolDefinition,
	createEditToolDefinition,
	createReadToolDefinition,
	createWriteToolDefinition,
	type ExtensionAPI,
	type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { type TSchema, Type } from "typebox";
import { registerPiFold } from "../../src/index.ts";
import { type ArmSetup, PLAN_ENV, parseArmSetup, type ReferenceSetup, type ServePlan, STATUS_ENV } from "./config.ts";
import { referenceDrafts } from "./reference.ts";

/** Pi's built-in tool definitions, by name, for their descriptions and prompt text. */
const BUILT_INS: Record<string, (cwd: string) => ToolDefinition> = {
	read: createReadToolDefinition as (cwd: string) => ToolDefinition,
	bash: createBashToolDefinition as (cwd: string) => ToolDefinition,
	edit: createEditToolDefinition as (cwd: string) => ToolDefinition,
	write: createWriteToolDefinition as (cwd: string) => ToolDefinition,
};

/** The built-in's parameter schema with nothing required, so any recorded argument shape validates. */
function relaxedParameters(schema: TSchema): TSchema {
	const { required: _required, ...rest } = schema as TSchema & { required?: unknown };
	return rest as TSchema;
}

function registerRecordedTool(pi: ExtensionAPI, name: string, plan: ServePlan): void {
	const builtIn = BUILT_INS[name]?.(process.cwd());
	pi.registerTool({
		name,
		label: builtIn?.label ?? name,
		description: builtIn?.description ?? `Recorded tool ${name}.`,
		...(builtIn?.promptSnippet ? { promptSnippet: builtIn.promptSnippet } : {}),
		...(builtIn?.promptGuidelines ? { promptGuidelines: builtIn.promptGuidelines } : {}),
		parameters: builtIn ? relaxedParameters(builtIn.parameters) : Type.Object({}, { additionalProperties: true }),
		async execute(toolCallId) {
			const steer = plan.steers[toolCallId];
			if (steer !== undefined) pi.sendUserMessage(steer, { deliverAs: "steer" });
			const recorded = plan.results[toolCallId];
			if (!recorded) {
				return {
					content: [{ type: "text", text: `host replay: no recorded result for call ${toolCallId}` }],
					details: undefined,
					isError: true,
				};
			}
			return { content: recorded.content, details: recorded.details, isError: recorded.isError };
		},
	});
}

function registerRecordedBash(pi: ExtensionAPI, plan: ServePlan): void {
	let next = 0;
	pi.on("user_bash", (event) => {
		const recorded = plan.bash[next];
		if (!recorded || recorded.command !== event.command) {
			throw new Error(
				`host replay: !${event.command} is not the next recorded command (${recorded ? `!${recorded.command}` : "none left"})`,
			);
		}
		next++;
		return {
			result: {
				output: recorded.output,
				exitCode: recorded.exitCode,
				cancelled: recorded.cancelled,
				truncated: recorded.truncated,
			},
		};
	});
}

function registerReference(pi: ExtensionAPI, setup: ReferenceSetup): void {
	pi.on("turn_end", (event) => {
		const entries = referenceDrafts(event.context.contextEntries, setup);
		return entries.length > 0 ? { entries } : undefined;
	});
}

function registerArm(pi: ExtensionAPI, arm: ArmSetup): void {
	switch (arm.kind) {
		case "native":
			return;
		case "pi-fold":
			registerPiFold(pi, arm.options ?? {});
			return;
		case "reference":
			registerReference(pi, arm);
			return;
	}
}

export default function hostReplayExtension(pi: ExtensionAPI): void {
	const statusFile = process.env[STATUS_ENV];
	try {
		const planFile = process.env[PLAN_ENV];
		if (!planFile) throw new Error(`host-replay extension: ${PLAN_ENV} is not set`);
		const plan = JSON.parse(readFileSync(planFile, "utf8")) as ServePlan;
		for (const name of plan.toolNames) registerRecordedTool(pi, name, plan);
		registerRecordedBash(pi, plan);
		registerArm(pi, parseArmSetup(process.env));
		if (statusFile) writeFileSync(statusFile, `${JSON.stringify({ ok: true })}\n`);
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		if (statusFile) writeFileSync(statusFile, `${JSON.stringify({ ok: false, message })}\n`);
	}
}
