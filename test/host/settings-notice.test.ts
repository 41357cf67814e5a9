import { describe, expect, it } from "vitest";
import { compactionSettingsProblems } from "../../src/compaction/settings/notices.ts";
import { readCompactionSettings, type SettingsFileIo } from "../../src/compaction/settings/settings-source.ts";
import { resolveWithSettings } from "../../src/fold/pi/settings-file.ts";
import { servingBudget } from "../../src/fold/policy/budget.ts";
import { NOTICE_MAX_PROBLEMS, type SettingsProblem, settingsNotice } from "../../src/host/settings-notice.ts";
import { modelWindow, windowProblems } from "../../src/settings/limits.ts";
import { compactionOrigin, foldOptionOrigin, originLabel } from "../../src/settings/origin.ts";

const GLOBAL = "/agent/settings.json";
const PROJECT = "/proj/.pi/settings.json";

function io(files: Record<string, unknown>): SettingsFileIo {
	return {
		agentDir: () => "/agent",
		readText: (path) => (Object.hasOwn(files, path) ? JSON.stringify(files[path]) : undefined),
	};
}

describe("one settings notice", () => {
	it("tells fold and compaction problems in one format, grouped by file, with what is used instead", () => {
		const files = {
			[GLOBAL]: { piFold: { foldScheduling: "sometimes" }, compaction: { targetContextRatio: 5 } },
			[PROJECT]: { compaction: { engine: "bogus" } },
		};
		const context = { cwd: "/proj", isProjectTrusted: () => true };
		const fold = resolveWithSettings(
			{},
			[
				{ path: GLOBAL, scope: "global", section: files[GLOBAL].piFold },
				{ path: PROJECT, scope: "project", section: undefined },
			],
			"session",
		).problems;
		const compaction = compactionSettingsProblems(readCompactionSettings(context, undefined, io(files)));
		const notice = settingsNotice([...fold, ...compaction]);
		expect(notice?.text).toBe(
			[
				"pi-fold settings: 3 problems; every other setting is in use.",
				`  ${GLOBAL}`,
				'    piFold.foldScheduling = "sometimes": foldScheduling "sometimes" is not a scheduling; use "immediate" or "epoch"; using "epoch".',
				"    compaction.targetContextRatio = 5: lowered to the maximum 0.85; using 0.85.",
				`  ${PROJECT}`,
				'    compaction.engine = "bogus": must be "fabric" or "pi"; using "fabric".',
			].join("\n"),
		);
		// The stderr form: the same words on one line, no list markers, no second product name.
		expect(notice?.oneLine).toBe(
			`pi-fold settings: 3 problems; every other setting is in use. ${GLOBAL}: piFold.foldScheduling = "sometimes": foldScheduling "sometimes" is not a scheduling; use "immediate" or "epoch"; using "epoch". compaction.targetContextRatio = 5: lowered to the maximum 0.85; using 0.85. ${PROJECT}: compaction.engine = "bogus": must be "fabric" or "pi"; using "fabric".`,
		);
		expect(notice?.oneLine).not.toMatch(/\||pi-fold.*pi-fold/);
	});

	it("tells a problem once however many readers report it, bounds the list and says nothing when clean", () => {
		const problem = { path: GLOBAL, key: "piFold.brandNoun", value: 3, reason: "must be text", using: '"x"' };
		expect(settingsNotice([problem, { ...problem }])?.text.split("\n")).toHaveLength(3);
		expect(settingsNotice([])).toBeUndefined();
		const many = Array.from({ length: NOTICE_MAX_PROBLEMS + 3 }, (_, i) => ({ ...problem, key: `piFold.k${i}` }));
		expect(settingsNotice(many)?.text).toMatch(/\n {2}… and 3 more\.$/);
		const long = settingsNotice([{ ...problem, value: "x".repeat(500) }])?.text ?? "";
		expect(long.length).toBeLessThan(300);
	});
});

describe("window settings larger than the model's window", () => {
	const model = { key: "openai/gpt-x", contextWindow: 64_000 };

	it("warns about a serving window and a token threshold the model cannot reach, naming the file", () => {
		const problems = windowProblems(
			{
				providerTotalWindow: { value: 100_000, path: GLOBAL },
				tokenThreshold: { value: 400_000, path: PROJECT },
			},
			model,
		);
		expect(problems.map((problem) => [problem.path, problem.key, problem.value])).toEqual([
			[GLOBAL, "piFold.providerTotalWindow", 100_000],
			[PROJECT, 'compaction.tokenThresholds["openai/gpt-x"]', 400_000],
		]);
		expect(problems[0]?.reason).toMatch(/larger than openai\/gpt-x's context window of 64,000 tokens/);
		expect(problems[1]?.reason).toMatch(/never reached/);
	});

	it("says what a serving window above the model's does: the budget pi-fold keeps and where the fence moves", () => {
		const total = { providerTotalWindow: { value: 100_000, path: GLOBAL } };
		const [above] = windowProblems(total, { ...model, maxTokens: 8_000 });
		// The budget is Pi's compaction line, as the runtime measures it; the total only moves the fence.
		const facts = { tokens: null, descriptor: 64_000, providerTotalWindow: 100_000, outputReservation: 8_000 };
		expect(servingBudget(facts)).toBe(47_616);
		expect(above?.reason).toContain(
			"the budget stays 47,616 tokens (Pi's compaction line, the window less Pi's reserve); only the fence moves, so requests of up to 92,000 tokens are sent instead of refused",
		);
		expect(above?.using).toBeUndefined();
		expect(settingsNotice([above as SettingsProblem])?.oneLine).not.toContain("as set");
		// Pi's reserve from the settings file moves the line with it.
		const [reserved] = windowProblems(total, { ...model, maxTokens: 8_000, reserveTokens: 24_000 });
		expect(reserved?.reason).toContain("the budget stays 40,000 tokens");
		// A total whose room for output is under the line binds instead.
		const [tight] = windowProblems(
			{ providerTotalWindow: { value: 70_000, path: GLOBAL } },
			{ ...model, maxTokens: 32_000 },
		);
		expect(tight?.reason).toContain("the budget stays 38,000 tokens (the total less the model's 32,000-token output)");
	});

	it("reads Pi's reserve for the model from the settings files, the project's over the global one's", () => {
		const layers = [
			{ section: { reserveTokens: 20_000 } },
			{ section: { modelOverrides: { "openai/gpt-x": { reserveTokens: 30_000 } } } },
		];
		expect(modelWindow({ provider: "openai", id: "gpt-x", contextWindow: 64_000, maxTokens: 8_000 }, layers)).toEqual({
			key: "openai/gpt-x",
			contextWindow: 64_000,
			maxTokens: 8_000,
			reserveTokens: 30_000,
		});
	});

	it("says nothing when the settings fit or the window is unknown", () => {
		const fits = {
			providerTotalWindow: { value: 64_000, path: GLOBAL },
			tokenThreshold: { value: 50_000, path: GLOBAL },
		};
		expect(windowProblems(fits, model)).toEqual([]);
		expect(windowProblems({ providerTotalWindow: { value: 1e9, path: GLOBAL } }, undefined)).toEqual([]);
	});
});

describe("where a setting comes from", () => {
	const layers = [
		{ path: GLOBAL, scope: "global" as const, section: { providerTotalWindow: 1, thresholds: { "a/b": 0.5 } } },
		{ path: PROJECT, scope: "project" as const, section: { providerTotalWindow: 2 } },
	];

	it("piFold: code, else the last file not refused for it, else the default", () => {
		expect(foldOptionOrigin("providerTotalWindow", true, layers, new Set())).toEqual({ kind: "code" });
		expect(originLabel(foldOptionOrigin("providerTotalWindow", false, layers, new Set()))).toBe("project file");
		const refused = new Set([`${PROJECT}\npiFold.providerTotalWindow`]);
		expect(foldOptionOrigin("providerTotalWindow", false, layers, refused)).toMatchObject({ path: GLOBAL });
		expect(foldOptionOrigin("brandNoun", false, layers, new Set())).toEqual({ kind: "default" });
	});

	it("compaction: the last file that sets the key, else code, else the default", () => {
		expect(compactionOrigin(["thresholds", "a/b"], true, layers)).toMatchObject({ scope: "global" });
		expect(compactionOrigin(["engine"], true, layers)).toEqual({ kind: "code" });
		expect(compactionOrigin(["engine"], false, layers)).toEqual({ kind: "default" });
	});
});
