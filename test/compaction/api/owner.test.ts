import { describe, expect, it } from "vitest";
import { compactionOwnerOf, latestCompactionOwner } from "../../../src/compaction/api/owner.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

describe("compaction owner", () => {
	it("classifies Fabric details, other extension results and Pi's summarizer", () => {
		expect(compactionOwnerOf({ details: { compactor: "fabric", version: 2 }, fromHook: true })).toBe("fabric");
		expect(compactionOwnerOf({ details: { compactor: "pi-vcc" }, fromHook: true })).toBe("external");
		expect(compactionOwnerOf({ details: { readFiles: [], modifiedFiles: [] }, fromHook: false })).toBe("pi");
		expect(compactionOwnerOf({ details: undefined })).toBe("pi");
	});

	it("reads the latest compaction on the branch, or none", () => {
		const b = new SessionBuilder();
		b.user("hi");
		expect(latestCompactionOwner(b.entries)).toBe("none");
		b.compaction("pi summary", "");
		b.compaction("fabric summary", "", { compactor: "fabric", version: 2 });
		expect(latestCompactionOwner(b.entries)).toBe("fabric");
	});
});
