/**
 * Bench-only Pi extension for the agent benchmark (never shipped, never loaded by the package).
 *
 * Owns the Pi side of one benchmark run: it registers the staged `repo_stage`
 * tool (deterministic text per seed and stage, see workload.ts) and then sets
 * up the arm under test from `PI_FOLD_BENCH_ARM`: nothing more (Pi native),
 * the whole package through `registerPiFold(pi, options)`, or the compactor
 * alone through `registerCompaction`. Whether the arm's registration worked is
 * written to the file named by `PI_FOLD_BENCH_STATUS`, so the bench can report
 * a failing arm as "failed: <message>" instead of silently measuring Pi
 * without it. Run with `pi --no-extensions -e bench/agent/extension.ts`.
 */

import { writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { registerCompaction } from "../../src/compaction/pi/hook.ts";
import { registerPiFold } from "../../src/index.ts";
import { type ArmSetup, parseArmSetup, parseWorkload, STATUS_ENV } from "./config.ts";
import { STAGE_TOOL_NAME, stageText, type Workload } from "./workload.ts";

function registerStageTool(pi: ExtensionAPI, workload: Workload): void {
	pi.registerTool({
		name: STAGE_TOOL_NAME,
		label: "Repo stage",
		description:
			"Returns the notes for one stage of the staged repository assignment. Call stages in order; reread: true returns an earlier stage again.",
		parameters: Type.Object(
			{
				stage: Type.Integer({ minimum: 1, maximum: workload.stages, description: "Stage number, 1-based" }),
				reread: Type.Optional(Type.Boolean({ description: "Read an earlier stage again" })),
			},
			{ additionalProperties: false },
		),
		async execute(_toolCallId, params) {
			const text = stageText(workload, params.stage, params.reread === true);
			return { content: [{ type: "text", text }], details: { stage: params.stage, bytes: text.length } };
		},
	});
}

function registerArm(pi: ExtensionAPI, arm: ArmSetup): void {
	switch (arm.kind) {
		case "native":
			return;
		case "pi-fold":
			registerPiFold(pi, arm.options ?? {});
			return;
		case "compactor":
			// Folding off: only the compactor, with no recall tool to name (there is no active_context).
			registerCompaction(pi, arm.options?.compaction);
			return;
	}
}

export default function benchAgentExtension(pi: ExtensionAPI): void {
	const workload = parseWorkload(process.env);
	const statusFile = process.env[STATUS_ENV];
	registerStageTool(pi, workload);
	try {
		registerArm(pi, parseArmSetup(process.env));
		if (statusFile) writeFileSync(statusFile, `${JSON.stringify({ ok: true })}\n`);
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		if (statusFile) writeFileSync(statusFile, `${JSON.stringify({ ok: false, message })}\n`);
	}
}
