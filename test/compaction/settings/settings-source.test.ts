import { describe, expect, it } from "vitest";
import { DEFAULT_TARGET_CONTEXT_RATIO } from "../../../src/compaction/settings/settings.ts";
import { mergeCompactionSections, readCompactionSettings } from "../../../src/compaction/settings/settings-source.ts";
import { GLOBAL_SETTINGS, memoryIo, PROJECT_SETTINGS, TEST_CWD } from "../../fixtures/compaction-host.ts";

const context = (trusted: boolean) => ({ cwd: TEST_CWD, isProjectTrusted: () => trusted });

describe("mergeCompactionSections", () => {
	it("lets later layers win key by key and merges plain-object values one level deep", () => {
		const merged = mergeCompactionSections([
			{ engine: "pi", thresholds: { "a/x": 0.5, "b/y": 0.6 }, repairOrphans: false },
			undefined,
			"not an object",
			{ engine: "fabric", thresholds: { "b/y": 0.9 } },
		]);
		expect(merged).toEqual({ engine: "fabric", thresholds: { "a/x": 0.5, "b/y": 0.9 }, repairOrphans: false });
	});
});

describe("readCompactionSettings", () => {
	it("uses the defaults when nothing is configured", () => {
		const read = readCompactionSettings(context(true), undefined, memoryIo());
		expect(read.settings.settings).toMatchObject({ engine: "fabric", repairOrphans: true });
		expect(read.files).toEqual([]);
	});

	it("layers options, then the global file, then the trusted project file", () => {
		const io = memoryIo({
			[GLOBAL_SETTINGS]: { compaction: { engine: "pi", targetContextRatio: 0.5, keepRecentTokens: 1000 } },
			[PROJECT_SETTINGS]: { compaction: { engine: "fabric" } },
		});
		const read = readCompactionSettings(context(true), { repairOrphans: false, targetContextRatio: 0.7 }, io);
		expect(read.settings.settings).toMatchObject({
			engine: "fabric",
			targetContextRatio: 0.5,
			repairOrphans: false,
			keepRecentTokens: 1000,
		});
		expect(read.files).toEqual([GLOBAL_SETTINGS, PROJECT_SETTINGS]);
	});

	it("ignores the project file while the project is not trusted", () => {
		const io = memoryIo({ [PROJECT_SETTINGS]: { compaction: { engine: "pi" } } });
		const read = readCompactionSettings(context(false), undefined, io);
		expect(read.settings.settings.engine).toBe("fabric");
		expect(read.files).toEqual([]);
	});

	it("skips a malformed file, reports it, and validates the rest", () => {
		const io = memoryIo({
			[GLOBAL_SETTINGS]: "{ not json",
			[PROJECT_SETTINGS]: { compaction: { targetContextRatio: 5, engine: "llm" } },
		});
		const read = readCompactionSettings(context(true), undefined, io);
		expect(read.problems).toEqual([{ path: GLOBAL_SETTINGS, reason: "not valid JSON" }]);
		expect(read.settings.settings.targetContextRatio).toBe(0.85);
		expect(read.settings.settings.engine).toBe("fabric");
		expect(read.settings.adjustments.map((adjustment) => adjustment.path).sort()).toEqual([
			"engine",
			"targetContextRatio",
		]);
	});

	it("reads the files again at every use, so an edit applies without a reload", () => {
		const files: Record<string, unknown> = {};
		const io = memoryIo(files);
		expect(readCompactionSettings(context(true), undefined, io).settings.settings.targetContextRatio).toBe(
			DEFAULT_TARGET_CONTEXT_RATIO,
		);
		files[GLOBAL_SETTINGS] = { compaction: { targetContextRatio: 0.4 } };
		expect(readCompactionSettings(context(true), undefined, io).settings.settings.targetContextRatio).toBe(0.4);
	});
});
