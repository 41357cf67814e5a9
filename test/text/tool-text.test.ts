import { describe, expect, it } from "vitest";
import {
	appendedExitCode,
	errorFirstLine,
	hostOutputHeader,
	patchFiles,
	resultFirstLine,
	withoutHostHeader,
} from "../../src/text/tool-text.ts";

/** Codex CLI's unified-exec frame, as its results carry it. */
const UNIFIED =
	"Chunk ID: a4767e\nWall time: 0.0021 seconds\nProcess exited with code 2\nOriginal token count: 41\nOutput:\nsrc/app.ts(3,1): error TS2304: Cannot find name 'x'.\n";
/** Codex CLI's older shell frame, with Windows line ends. */
const SHELL = 'Exit code: 0\r\nWall time: 0.3 seconds\r\nOutput:\r\n{\r\n  "name": "web"\r\n}\r\n';

describe("a host's output frame", () => {
	it("is read before the output, with the exit code it states", () => {
		expect(hostOutputHeader(UNIFIED)).toEqual({ bodyStart: UNIFIED.indexOf("src/app.ts"), exitCode: 2 });
		expect(withoutHostHeader(SHELL)).toBe('{\r\n  "name": "web"\r\n}\r\n');
		expect(appendedExitCode(UNIFIED)).toBe(2);
		expect(appendedExitCode(SHELL)).toBe(0);
	});

	it("never shows in an error preview or a result's first line", () => {
		expect(errorFirstLine(UNIFIED)).toEqual({
			line: "src/app.ts(3,1): error TS2304: Cannot find name 'x'.",
			exitCode: 2,
		});
		expect(resultFirstLine(SHELL)).toBe('"name": "web"');
		const running =
			"Chunk ID: 9f00aa\nWall time: 5.0 seconds\nProcess running with session ID 7\nOutput:\nlistening on :3000\n";
		expect(resultFirstLine(running)).toBe("listening on :3000");
	});

	it("with no output leaves nothing to preview but the exit code", () => {
		const empty = "Exit code: 1\nWall time: 0.1 seconds\nOutput:\n";
		expect(hostOutputHeader(empty)).toEqual({ bodyStart: empty.length, exitCode: 1 });
		expect(errorFirstLine(empty)).toEqual({ exitCode: 1 });
	});

	it("is not guessed from output that only looks like one", () => {
		for (const text of [
			"Wall time: 3 seconds is what the benchmark printed\nOutput:\nx",
			"Output:\nplain",
			"Exit code: 0\nthe command's own first line",
			"hello\nExit code: 0\nOutput:\n",
			"",
		]) {
			expect(hostOutputHeader(text)).toEqual({ bodyStart: 0 });
			expect(withoutHostHeader(text)).toBe(text);
		}
		expect(appendedExitCode("done\nCommand exited with code 3")).toBe(3);
	});
});

describe("a host session still running", () => {
	it("is named by the frame, so a later call that reads its output can name the command", () => {
		const text = "Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 42\nOutput:\nstarting\n";
		expect(hostOutputHeader(text)).toEqual({ bodyStart: text.indexOf("starting"), sessionId: "42" });
	});
});

describe("patchFiles", () => {
	it("reads the files an apply_patch envelope adds, updates, deletes and moves, each once in first-named order", () => {
		const patch = [
			"*** Begin Patch",
			"*** Update File: src/a.ts",
			"@@",
			"-*** Update File: not/a/header.ts",
			"+x",
			"*** Add File: src/b.ts\r",
			"+export {};",
			"*** Delete File: src/old.ts",
			"*** Update File: src/c.ts",
			"*** Move to: src/moved.ts",
			"*** Update File: src/a.ts",
			"*** End Patch",
		].join("\n");
		expect(patchFiles(patch)).toEqual([
			{ action: "update", path: "src/a.ts" },
			{ action: "add", path: "src/b.ts" },
			{ action: "delete", path: "src/old.ts" },
			{ action: "update", path: "src/moved.ts" },
		]);
		expect(patchFiles("no envelope here")).toEqual([]);
	});
});
