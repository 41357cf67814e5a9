/** Folds announced to the model whose records never landed. */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { lostAnnouncements, lostNoticeText, noticeType } from "../../../src/fold/engine/recovery.ts";
import { emptyFoldState } from "../../../src/fold/state/state.ts";
import { appendLinked } from "../../fixtures/common.ts";

const PREFIX = "pi-fold-active-context";
const LANDED = "f-aaaaaaaaaaaa";
const LOST = "f-bbbbbbbbbbbb";

function foldResult(entries: SessionEntry[], foldId: string, ok = true, action = "fold"): void {
	appendLinked(entries, `r${entries.length}`, {
		type: "message",
		message: {
			role: "toolResult",
			toolCallId: `c${entries.length}`,
			toolName: "active_context",
			content: [{ type: "text", text: `Folded tool-batch ${foldId}` }],
			details: { action, ok, foldId },
			isError: !ok,
			timestamp: 0,
		},
	});
}

describe("lost fold announcements", () => {
	it("names announced folds the state does not hold, once, and ignores refusals and other actions", () => {
		const entries: SessionEntry[] = [];
		foldResult(entries, LANDED);
		foldResult(entries, LOST);
		foldResult(entries, "f-cccccccccccc", false);
		foldResult(entries, "f-dddddddddddd", true, "peek");
		const state = { ...emptyFoldState(), records: [{ id: LANDED } as never] };
		expect(lostAnnouncements(entries, state, "active_context", PREFIX)).toEqual([LOST]);
		appendLinked(entries, "n1", {
			type: "custom_message",
			customType: noticeType(PREFIX),
			content: lostNoticeText([LOST], "active_context"),
			display: true,
			details: { foldIds: [LOST] },
		});
		expect(lostAnnouncements(entries, state, "active_context", PREFIX)).toEqual([]);
	});

	it("tells the model the entries are still raw and how to fold again", () => {
		expect(lostNoticeText([LOST], "active_context")).toMatch(
			/Fold f-bbbbbbbbbbbb announced earlier did not land.*still raw.*active_context \{"action":"fold"/,
		);
	});
});
