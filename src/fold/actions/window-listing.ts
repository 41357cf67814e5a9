/**
 * `status` with `detail: "window"`: the window as the agent can name it —
 * every raw context entry with its entry id, role and a one-line preview,
 * and every collapsed fold with its id, in transcript order. The model sees
 * messages without entry ids; this is where `fold` gets them. Previews are
 * mechanical (first line, bounded), never interpretations.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { truncateText } from "../../text/bounded.ts";
import { contentText, firstLine } from "../../text/lines.ts";
import { visibleLayout } from "../lattice/lattice-view.ts";
import type { FoldLattice } from "../lattice/records.ts";
import { type BranchView, entryUnitKind } from "../lattice/units.ts";

/** Most recent items listed; older ones are counted. */
export const WINDOW_LISTING_LIMIT = 120;
/** Characters of preview per line. */
export const WINDOW_PREVIEW_CHARS = 72;

/** A bounded one-line preview: the first non-blank line of the text. */
function preview(text: string): string {
	return truncateText(firstLine(text), WINDOW_PREVIEW_CHARS);
}

/** One line naming an entry: id, role, and what it holds. */
export function describeEntry(entry: SessionEntry): string | undefined {
	if (entryUnitKind(entry) === "rider") return undefined;
	if (entry.type === "custom_message")
		return `${entry.id} custom ${JSON.stringify(preview(contentText(entry.content)))}`;
	if (entry.type !== "message") return `${entry.id} ${entry.type}`;
	const message = entry.message;
	switch (message.role) {
		case "assistant": {
			const calls = message.content.flatMap((part) => (part.type === "toolCall" ? [`${part.name} ${part.id}`] : []));
			const text = preview(contentText(message.content));
			return `${entry.id} assistant${text ? ` ${JSON.stringify(text)}` : ""}${calls.length > 0 ? ` calls ${calls.join(", ")}` : ""}`;
		}
		case "toolResult":
			return `${entry.id} result ${message.toolName} ${message.toolCallId}${message.isError ? " error" : ""}`;
		case "user":
			return `${entry.id} user ${JSON.stringify(preview(contentText(message.content)))}`;
		default:
			return `${entry.id} ${message.role}`;
	}
}

export function formatWindowListing(lattice: FoldLattice, view: BranchView, expanded: ReadonlySet<string>): string {
	const lines: string[] = [];
	for (const item of visibleLayout(lattice, view, expanded)) {
		if (item.type === "fold") {
			const first = view.entries[item.start]?.id ?? "?";
			const last = view.entries[item.end - 1]?.id ?? "?";
			lines.push(`${item.foldId} folded ${item.kind} ${first}…${last}`);
			continue;
		}
		const entry = view.entries[item.index];
		const line = entry ? describeEntry(entry) : undefined;
		if (line) lines.push(line);
	}
	const hidden = Math.max(0, lines.length - WINDOW_LISTING_LIMIT);
	const shown = lines.slice(hidden);
	const header =
		hidden > 0
			? `Window, newest ${shown.length} items (${hidden} earlier not listed); name spans by these ids:`
			: "Window, oldest first; name spans by these ids:";
	return [header, ...shown.map((line) => `  ${line}`)].join("\n");
}
