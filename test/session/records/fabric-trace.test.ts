import { describe, expect, it } from "vitest";
import {
	FABRIC_AUDIT_MAX_RECORDS,
	FABRIC_EXEC_TOOL_NAME,
	FABRIC_RUN_DESCRIPTION_MAX_BYTES,
	FABRIC_RUN_NAME_MAX_BYTES,
	FABRIC_TRACE_KIND,
	FABRIC_TRACE_MAX_BYTES,
	FABRIC_TRACE_MAX_OPERATIONS,
	FABRIC_TRACE_MAX_PHASES,
	FABRIC_TRACE_VERSION,
	readFabricDisplay,
	readFabricExecutionTraceV1,
	readLegacyFabricAudits,
	splitRef,
} from "../../../src/session/records/fabric-trace.ts";
import { readBoundedJson } from "../../../src/session/records/record-guards.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";
import { traceV1 } from "../../fixtures/compaction-events.ts";

describe("Fabric payload constants", () => {
	it("pins the spec's bounds", () => {
		expect(FABRIC_EXEC_TOOL_NAME).toBe("fabric_exec");
		expect(FABRIC_RUN_NAME_MAX_BYTES).toBe(256);
		expect(FABRIC_RUN_DESCRIPTION_MAX_BYTES).toBe(1024);
		expect(FABRIC_TRACE_KIND).toBe("pi-fabric.execution");
		expect(FABRIC_TRACE_VERSION).toBe(1);
		expect(FABRIC_TRACE_MAX_BYTES).toBe(512 * 1024);
		expect(FABRIC_TRACE_MAX_OPERATIONS).toBe(2048);
		expect(FABRIC_TRACE_MAX_PHASES).toBe(512);
		expect(FABRIC_AUDIT_MAX_RECORDS).toBe(2048);
	});
});

describe("readFabricDisplay", () => {
	it("reads a non-blank typed name and optional description", () => {
		expect(readFabricDisplay({ display: { name: " Build  index ", description: "Walks\nthe repo" } })).toEqual({
			name: "Build index",
			description: "Walks the repo",
		});
		expect(readFabricDisplay({ display: { name: "Only name", description: 7 } })).toEqual({ name: "Only name" });
	});

	it("rejects missing, untyped or blank names", () => {
		expect(readFabricDisplay({})).toBeUndefined();
		expect(readFabricDisplay({ display: { name: "   " } })).toBeUndefined();
		expect(readFabricDisplay({ display: { name: 3 } })).toBeUndefined();
		expect(readFabricDisplay({ display: "name" })).toBeUndefined();
	});

	it("bounds the name to 256 and the description to 1,024 UTF-8 bytes", () => {
		const display = readFabricDisplay({ display: { name: "ü".repeat(400), description: "d".repeat(5000) } });
		expect(utf8ByteLength(display?.name ?? "")).toBeLessThanOrEqual(256);
		expect(utf8ByteLength(display?.description ?? "")).toBeLessThanOrEqual(1024);
	});
});

describe("readFabricExecutionTraceV1", () => {
	it("accepts the documented V1 shape and orders operations by sequence", () => {
		const trace = traceV1(
			[
				{ ref: "pi.edit", args: { path: "b.ts" }, sequence: 5 },
				{ ref: "pi.bash", args: { command: "make" }, sequence: 2, outcome: "failed", error: "boom" },
			],
			{ phases: ["plan", "apply"], outcome: "failed" },
		);
		const read = readFabricExecutionTraceV1(trace);
		expect(read?.outcome).toBe("failed");
		expect(read?.phases).toEqual(["plan", "apply"]);
		expect(read?.operations.map((operation) => operation.ref)).toEqual(["pi.bash", "pi.edit"]);
		expect(read?.operations[0]).toMatchObject({ provider: "pi", action: "bash", error: "boom", outcome: "failed" });
	});

	it("rejects unknown versions, kinds, keys and malformed operations", () => {
		const valid = traceV1([{ ref: "pi.read", args: { path: "a" } }], { error: "partial" });
		expect(readFabricExecutionTraceV1(valid)).toEqual({
			outcome: "succeeded",
			phases: [],
			operations: [
				{ sequence: 0, ref: "pi.read", provider: "pi", action: "read", args: { path: "a" }, outcome: "succeeded" },
			],
			error: "partial",
		});
		expect(readFabricExecutionTraceV1({ ...valid, version: 2 })).toBeUndefined();
		expect(readFabricExecutionTraceV1({ ...valid, kind: "other" })).toBeUndefined();
		expect(readFabricExecutionTraceV1({ ...valid, extra: true })).toBeUndefined();
		expect(readFabricExecutionTraceV1({ ...valid, outcome: "ok" })).toBeUndefined();
		const duplicate = traceV1([
			{ ref: "a.b", sequence: 1 },
			{ ref: "a.c", sequence: 1 },
		]);
		expect(readFabricExecutionTraceV1(duplicate)).toBeUndefined();
		const badArgs = traceV1([{ ref: "a.b" }]);
		(badArgs.operations as Record<string, unknown>[])[0] = {
			...(badArgs.operations as Record<string, unknown>[])[0],
			args: [1, 2],
		};
		expect(readFabricExecutionTraceV1(badArgs)).toBeUndefined();
		expect(readFabricExecutionTraceV1({ ...valid, counts: { droppedValues: 0 } })).toBeUndefined();
		expect(readFabricExecutionTraceV1({ ...valid, phases: [""] })).toBeUndefined();
		// Counts and sequences are safe integers, like every other count the compactor reads.
		const unsafe = { droppedValues: 2 ** 53, truncatedValues: 0, redactedValues: 0, droppedOperations: 0 };
		expect(readFabricExecutionTraceV1({ ...valid, counts: unsafe })).toBeUndefined();
		expect(readFabricExecutionTraceV1(traceV1([{ ref: "a.b", sequence: 2 ** 53 }]))).toBeUndefined();
	});

	it("rejects traces over the operation bound", () => {
		const many = traceV1(Array.from({ length: FABRIC_TRACE_MAX_OPERATIONS + 1 }, () => ({ ref: "x.y" })));
		expect(readFabricExecutionTraceV1(many)).toBeUndefined();
	});
});

describe("readLegacyFabricAudits", () => {
	it("accepts typed ref, JSON args, boolean success and optional string error", () => {
		const audits = readLegacyFabricAudits([
			{ ref: "pi.bash", args: { command: "ls" }, success: true, rendering: "ignored prose" },
			{ ref: "pi.write", args: { path: "a" }, success: false, error: "denied" },
		]);
		expect(audits).toEqual([
			{ ref: "pi.bash", provider: "pi", action: "bash", args: { command: "ls" }, outcome: "succeeded" },
			{ ref: "pi.write", provider: "pi", action: "write", args: { path: "a" }, outcome: "failed", error: "denied" },
		]);
	});

	it("rejects the whole array when any record is malformed", () => {
		expect(readLegacyFabricAudits([{ ref: "a.b", args: {}, success: "yes" }])).toBeUndefined();
		expect(readLegacyFabricAudits([{ ref: "a.b", success: true }])).toBeUndefined();
		expect(readLegacyFabricAudits([{ ref: "a.b", args: {}, success: true, error: 3 }])).toBeUndefined();
		expect(readLegacyFabricAudits({ ref: "a.b" })).toBeUndefined();
	});
});

describe("splitRef", () => {
	it("splits once on the first dot", () => {
		expect(splitRef("mcp.server.tool")).toEqual({ provider: "mcp", action: "server.tool" });
		expect(splitRef("plain")).toEqual({});
		expect(splitRef(".x")).toEqual({});
	});
});

describe("readBoundedJson", () => {
	const bounds = { maxDepth: 2, maxNodes: 10, maxCollection: 3, maxStringBytes: 5, maxBytes: 40 };

	it("accepts plain JSON within every bound", () => {
		expect(readBoundedJson({ a: [1, "x"], b: null }, bounds)).toMatchObject({ ok: true });
	});

	it("rejects each exceeded bound and non-JSON values", () => {
		expect(readBoundedJson({ a: { b: { c: 1 } } }, bounds).ok).toBe(false);
		expect(readBoundedJson([1, 2, 3, 4], bounds).ok).toBe(false);
		expect(readBoundedJson("toolong", bounds).ok).toBe(false);
		expect(readBoundedJson({ a: [1, 1, 1], b: [1, 1, 1], c: [1, 1] }, bounds).ok).toBe(false);
		expect(readBoundedJson({ a: "12345", b: "12345", c: "12345" }, { ...bounds, maxBytes: 20 }).ok).toBe(false);
		expect(readBoundedJson({ a: Number.NaN }, bounds).ok).toBe(false);
		expect(readBoundedJson({ a: undefined }, bounds).ok).toBe(false);
		expect(readBoundedJson(new Date(0), bounds).ok).toBe(false);
	});
});
