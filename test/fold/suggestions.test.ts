import { describe, expect, it } from "vitest";
import { readAcceptReports, SuggestionRegistry, suggestionEntryType } from "../../src/fold/suggestions.ts";

describe("suggestion sources", () => {
	it("register, report accepts as entry data, refuse bad sources and reports by name", () => {
		const persisted: unknown[] = [];
		const registry = new SuggestionRegistry(
			(data) => persisted.push(data),
			() => 42,
		);
		const handle = registry.register({ id: "slate" });
		handle.reportAccept({ suggestionId: "s1", accepted: true, foldId: "f-1" });
		handle.reportAccept({ suggestionId: "s2", accepted: false });
		expect(persisted).toEqual([
			{ v: 1, sourceId: "slate", suggestionId: "s1", accepted: true, foldId: "f-1", at: 42 },
			{ v: 1, sourceId: "slate", suggestionId: "s2", accepted: false, at: 42 },
		]);
		expect(() => registry.register({ id: "slate" })).toThrow(/already registered/);
		expect(() => registry.register({ id: "a b" })).toThrow(/id "a b" must be/);
		expect(() => handle.reportAccept({ suggestionId: "", accepted: true })).toThrow(/suggestionId must be/);
		handle.unregister();
		expect(() => handle.reportAccept({ suggestionId: "s3", accepted: true })).toThrow(/unregistered/);
		const branch = persisted.map((data, i) => ({
			type: "custom",
			customType: suggestionEntryType("pfx"),
			data,
			id: `e${i}`,
			parentId: null,
			timestamp: "",
		}));
		expect(readAcceptReports(branch as never, "pfx")).toHaveLength(2);
	});
});
