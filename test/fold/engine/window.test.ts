/**
 * The engine's window model keeps Pi's projection current as entries are
 * appended. At every size it must equal Pi's own `buildSessionProjection` of
 * the branch (messages and the reading `readWindow` takes from it), and with
 * drafts, Pi's projection of the branch with those drafts persisted.
 */

import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PREVIEW_ID_PREFIX, projectionWithDrafts } from "../../../src/fold/engine/materialize.ts";
import { WindowModel } from "../../../src/fold/engine/window.ts";
import { readWindow, type WindowReading } from "../../../src/fold/policy/budget.ts";
import { grownBranch } from "../../fixtures/random-branch.ts";

const FIXED = "system prompt ".repeat(20);
const fixedTokens = Math.ceil(FIXED.length / 4);

const plain = (reading: WindowReading) => ({
	entryTokens: [...reading.entryTokens].sort(([a], [b]) => (a < b ? -1 : 1)),
	fixedTokens: reading.fixedTokens,
	total: reading.total,
});
const visible = (messages: readonly { role: string }[]) => messages.filter((message) => message.role !== "system");

function piProjection(branch: readonly SessionEntry[]) {
	return buildSessionProjection(branch as SessionEntry[], branch.at(-1)?.id ?? null);
}

describe("WindowModel", () => {
	it("grown chunk by chunk, equals Pi's projection and reading of the branch at every size", () => {
		fc.assert(
			fc.property(grownBranch, ({ entries, points }) => {
				const model = new WindowModel();
				let at = 0;
				for (const point of points) {
					const before = at;
					for (; at < point; at++) {
						const entry = entries[at];
						if (entry) model.append(entry, entries.slice(0, at + 1));
					}
					if (before === point && point !== 0) continue;
					const branch = entries.slice(0, at);
					const pi = piProjection(branch);
					expect(model.messages()).toEqual(visible(pi.messages));
					expect(plain(model.reading(fixedTokens))).toEqual(plain(readWindow(pi, FIXED)));
					for (const entry of branch)
						expect(model.inWindow(entry.id)).toBe(pi.entries.some((item) => item.sourceEntry.id === entry.id));
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("with drafts, equals Pi's projection of the branch once they are persisted", () => {
		const draft = fc.record({
			target: fc.nat(),
			replacement: fc.option(
				fc.oneof(
					fc.string(),
					fc.array(fc.record({ type: fc.constant("text" as const), text: fc.string() }), { maxLength: 2 }),
				),
				{ nil: null },
			),
		});
		fc.assert(
			fc.property(grownBranch, fc.array(draft, { maxLength: 4 }), ({ entries }, picks) => {
				if (entries.length === 0) return;
				const model = new WindowModel();
				model.reset(entries);
				const drafts: ContextEditEntryDraft[] = picks.map((pick) => ({
					type: "context_edit",
					targetId: entries[pick.target % entries.length]?.id ?? "",
					replacement: pick.replacement === null ? null : { content: pick.replacement },
				}));
				const pi = projectionWithDrafts(entries, drafts);
				const drafted = model.withDrafts(drafts);
				expect(drafted.messages()).toEqual(visible(pi.messages));
				// Pi's preview holds the drafts as entries of their own, which project to nothing.
				const piReading = plain(readWindow(pi, FIXED));
				piReading.entryTokens = piReading.entryTokens.filter(([id]) => !id.startsWith(PREVIEW_ID_PREFIX));
				expect(plain(drafted.reading(fixedTokens))).toEqual(piReading);
				// The model itself is unchanged by reading an overlay.
				expect(model.messages()).toEqual(visible(piProjection(entries).messages));
			}),
			{ numRuns: 300 },
		);
	});
});
