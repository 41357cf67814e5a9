/**
 * The overflow line (issue 18, item 9): the retried request must get under
 * 90% of the refused one (or the model's window, if smaller) less Pi's
 * reserveTokens, and a line with no room left is 0, never negative; the
 * overflow Pi gave up on without asking anyone is found on the branch; Pi's
 * reserveTokens is read from its settings as Pi resolves it.
 */

import { describe, expect, it } from "vitest";
import {
	overflowLine,
	overflowNotEnoughText,
	piReserveTokens,
	unrecoveredOverflow,
} from "../../../src/fold/pi/overflow.ts";
import { appendLinked } from "../../fixtures/common.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { OVERFLOW_ERROR_MESSAGE } from "../../harness/loopback-provider.ts";

describe("overflowLine", () => {
	it("takes 90% of the refused request, less reserveTokens", () => {
		expect(overflowLine(20_000, 64_000, 4_000)).toBe(14_000);
	});

	it("takes the model's window when it is the smaller bound", () => {
		expect(overflowLine(150_000, 128_000, 16_384)).toBe(128_000 - 16_384);
	});

	it("is 0 when reserveTokens leaves no room (a 20k window, Pi's default reserve)", () => {
		expect(overflowLine(12_000, 20_000, 16_384)).toBe(0);
	});
});

describe("overflowNotEnoughText", () => {
	it("names the reserve setting when the line leaves no room", () => {
		const text = overflowNotEnoughText({
			brand: "pi-fold",
			failedTokens: 12_000,
			freedTokens: 0,
			line: 0,
			reserveTokens: 16_384,
			compacts: true,
		});
		expect(text).toContain("leaves no room once compaction.reserveTokens (16,384) is kept free");
		expect(text).toContain("nothing outside the newest turns can fold");
		expect(text).toContain("Pi's recovery compaction goes ahead");
	});
});

describe("unrecoveredOverflow", () => {
	/** An ask and a reply refused as too long; `omitted`: Pi's context_edit(null) of the reply followed. */
	function overflowed(omitted: boolean) {
		const b = new FoldBranch();
		b.user("go");
		const failed = b.assistant("", { stopReason: "error", errorMessage: OVERFLOW_ERROR_MESSAGE });
		if (omitted) appendLinked(b.entries, "edit", { type: "context_edit", targetId: failed, replacement: null });
		return { b, failed };
	}

	it("finds the omitted overflow reply with no compaction after it", () => {
		const { b, failed } = overflowed(true);
		expect(unrecoveredOverflow(b.entries)?.id).toBe(failed);
	});

	it("ignores one Pi did not omit (its recovery attempt was spent), one a compaction followed, and other errors", () => {
		expect(unrecoveredOverflow(overflowed(false).b.entries)).toBeUndefined();
		const { b, failed } = overflowed(true);
		b.compaction(failed);
		expect(unrecoveredOverflow(b.entries)).toBeUndefined();
		const other = new FoldBranch();
		const reply = other.assistant("", { stopReason: "error", errorMessage: "rate limited" });
		appendLinked(other.entries, "edit", { type: "context_edit", targetId: reply, replacement: null });
		expect(unrecoveredOverflow(other.entries)).toBeUndefined();
	});
});

describe("piReserveTokens", () => {
	const model = { provider: "p", id: "m" };
	it("takes the model's override, then the setting, as Pi does", () => {
		const compaction = { reserveTokens: 4_000, modelOverrides: { "p/m": { reserveTokens: 2_000 } } };
		expect(piReserveTokens({ compaction }, model)).toBe(2_000);
		expect(piReserveTokens({ compaction }, { provider: "p", id: "other" })).toBe(4_000);
	});

	it("is undefined when nothing valid is set (Pi's default applies)", () => {
		expect(piReserveTokens({}, model)).toBeUndefined();
		expect(piReserveTokens({ compaction: { reserveTokens: -1 } }, model)).toBeUndefined();
		expect(piReserveTokens({ compaction: { reserveTokens: "8000" } }, model)).toBeUndefined();
	});
});
