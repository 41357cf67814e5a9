import { describe, expect, it } from "vitest";
import type { SettingsFileIo } from "../../../src/compaction/settings/settings-source.ts";
import { JSON_OPTION_KEYS, resolveOptions } from "../../../src/fold/options.ts";
import {
	readLayers,
	registrationDrift,
	resolveWithSettings,
	type SettingsLayer,
	withSessionOptions,
} from "../../../src/fold/pi/settings-file.ts";
import { settingsNotice } from "../../../src/host/settings-notice.ts";

const GLOBAL = "/agent/settings.json";
const PROJECT = "/proj/.pi/settings.json";
const global = (section: unknown): SettingsLayer => ({ path: GLOBAL, scope: "global", section });
const project = (section: unknown): SettingsLayer => ({ path: PROJECT, scope: "project", section });

/** A valid settings-file value and a bad one for every JSON-expressible option, with what the good one resolves to. */
const CASES: Record<
	(typeof JSON_OPTION_KEYS)[number],
	{ good: unknown; expect: Record<string, unknown>; bad: unknown }
> = {
	toolName: { good: "ctx_tool", expect: { toolName: "ctx_tool" }, bad: "has space" },
	toolLabel: { good: "Context", expect: { toolLabel: "Context" }, bad: "" },
	commandPrefix: { good: "pf", expect: { commandNames: { status: "pf-context", fold: "pf-fold-context" } }, bad: 7 },
	commandNames: {
		good: { status: "ctx", fold: "ctx-fold" },
		expect: { commandNames: { status: "ctx", fold: "ctx-fold" } },
		bad: { status: "Bad Name" },
	},
	foldScheduling: { good: "immediate", expect: { foldScheduling: "immediate" }, bad: "eager" },
	toolActions: { good: ["status", "peek"], expect: { toolActions: ["status", "peek"] }, bad: ["status", "explode"] },
	evidenceIngestion: { good: false, expect: { evidenceIngestion: false }, bad: "no" },
	brandNoun: { good: "ctx", expect: { brandNoun: "ctx" }, bad: 3 },
	entryTypePrefix: { good: "my-ns", expect: { entryTypePrefix: "my-ns" }, bad: "has space" },
	summarizer: { good: "deterministic", expect: { summarizer: "deterministic" }, bad: "gpt" },
	foldPeekResults: { good: false, expect: { foldPeekResults: false }, bad: 1 },
	providerTotalWindow: { good: 200_000, expect: { providerTotalWindow: 200_000 }, bad: -5 },
	blockingTools: { good: ["Task"], expect: { blockingTools: ["Task"] }, bad: "Task" },
	readOnlyTools: { good: ["read", "grep"], expect: {}, bad: [1, 2] },
};

describe("piFold settings files", () => {
	it.each(JSON_OPTION_KEYS)("%s: a good value applies, a bad one is reported once with what is used", (key) => {
		const { good, expect: resolved, bad } = CASES[key];
		const ok = resolveWithSettings({}, [global({ [key]: good })], "session");
		expect(ok.problems).toEqual([]);
		expect(ok.resolved).toMatchObject(resolved);
		if (key === "readOnlyTools") expect([...ok.resolved.readOnlyTools]).toEqual(["read", "grep"]);

		const refused = resolveWithSettings({}, [global({ [key]: bad })], "session");
		expect(refused.problems).toHaveLength(1);
		const [problem] = refused.problems;
		expect(problem).toMatchObject({ path: GLOBAL, key: `piFold.${key}`, value: bad });
		expect(problem?.using).toBeDefined();
		expect(refused.resolved).toEqual(resolveOptions());
		const text = settingsNotice(refused.problems)?.oneLine ?? "";
		expect(text).toContain(GLOBAL);
		expect(text).toContain(`piFold.${key}`);
		expect(text).toContain(JSON.stringify(bad));
		expect(text).toContain("using");
		expect(text.split("\n")).toHaveLength(1);
	});

	it("project over global key by key; a bad project value falls back to the global one", () => {
		const { resolved, problems } = resolveWithSettings(
			{},
			[
				global({ providerTotalWindow: 100_000, brandNoun: "g" }),
				project({ providerTotalWindow: "big", brandNoun: "p" }),
			],
			"session",
		);
		expect(resolved).toMatchObject({ providerTotalWindow: 100_000, brandNoun: "p" });
		expect(problems).toEqual([
			expect.objectContaining({ path: PROJECT, key: "piFold.providerTotalWindow", using: "100000" }),
		]);
	});

	it("code wins over files without a notice", () => {
		const { resolved, problems } = resolveWithSettings(
			{ brandNoun: "code", foldScheduling: "immediate" },
			[global({ brandNoun: "file", toolActions: ["status", "unmark"] })],
			"session",
		);
		expect(resolved.brandNoun).toBe("code");
		// unmark is refused under the code's immediate scheduling, by resolveOptions' own rule.
		expect(problems).toEqual([
			expect.objectContaining({ key: "piFold.toolActions", reason: expect.stringMatching(/unmark/) }),
		]);
	});

	it("a project file cannot set registration options; unknown keys and bad sections are named", () => {
		const { resolved, problems } = resolveWithSettings(
			{},
			[global({ readonlyTools: ["read"], compaction: {} }), project({ toolName: "evil" })],
			"session",
		);
		expect(resolved.toolName).toBe("active_context");
		expect(problems.map((p) => p.key)).toEqual(["piFold.readonlyTools", "piFold.compaction", "piFold.toolName"]);
		expect(problems[1]?.reason).toMatch(/top-level "compaction"/);
		expect(problems[2]?.reason).toMatch(/global settings file/);
		const section = resolveWithSettings({}, [global(["not", "an", "object"])], "session").problems;
		expect(section).toEqual([expect.objectContaining({ key: "piFold", reason: "must be an object of options" })]);
	});

	it("registration reads only registration options; session start applies only session options", () => {
		const layers = [global({ toolName: "ctx_tool", brandNoun: "ctx" })];
		const registered = resolveWithSettings({}, layers, "registration").resolved;
		expect(registered).toMatchObject({ toolName: "ctx_tool", brandNoun: "pi-fold" });
		const session = resolveWithSettings({}, layers, "session").resolved;
		const live = withSessionOptions(registered, session);
		expect(live).toMatchObject({ toolName: "ctx_tool", brandNoun: "ctx" });
		// A value: the registered options are not changed in place, and the new ones cannot be.
		expect(registered).toMatchObject({ brandNoun: "pi-fold" });
		expect(Object.isFrozen(live)).toBe(true);
		expect(registrationDrift(registered, session, GLOBAL)).toEqual([]);
		const edited = resolveWithSettings({}, [global({ toolName: "other" })], "session").resolved;
		expect(registrationDrift(registered, edited, GLOBAL)).toEqual([
			expect.objectContaining({
				key: "piFold.toolName",
				using: '"ctx_tool"',
				reason: expect.stringMatching(/next start/),
			}),
		]);
	});

	it("reads the global file, and the project file only when trusted; a broken file is Pi's to report", () => {
		const files: Record<string, string> = {
			[GLOBAL]: "{ not json",
			[PROJECT]: JSON.stringify({ piFold: { brandNoun: "p" } }),
		};
		const io: SettingsFileIo = { agentDir: () => "/agent", readText: (path) => files[path] };
		expect(readLayers({ cwd: "/proj", isProjectTrusted: () => false }, io)).toHaveLength(1);
		const layers = readLayers({ cwd: "/proj", isProjectTrusted: () => true }, io);
		expect(layers.map((layer) => layer.scope)).toEqual(["global", "project"]);
		const { resolved, problems } = resolveWithSettings({}, layers, "session");
		expect(resolved.brandNoun).toBe("p");
		// Pi reports the unparseable file itself ("Invalid settings file …") and reads nothing from it; so does pi-fold.
		expect(layers[0]?.unreadable).toBe("not valid JSON");
		expect(problems).toEqual([]);
	});
});
