/**
 * The file lists Pi 1.6.0 appends to every compaction summary it writes
 * (pure), so a replayed compaction carries the paths Pi's would: whatever
 * its summarizer wrote, Pi adds the files the summarized messages read and
 * the files they wrote or edited, and carries the previous compaction's
 * lists forward (they are stored on the entry's `details`).
 *
 * Pi's rule, as compaction.js and its utils apply it: a `read`, `write` or
 * `edit` tool call with a string `path` argument; a file both read and
 * modified is listed as modified only; each list sorted; appended as
 * `<read-files>` and `<modified-files>` blocks after a blank line.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** Which list a tool's `path` lands in. */
const FILE_TOOLS: Readonly<Record<string, "read" | "modified">> = { read: "read", write: "modified", edit: "modified" };

/** The lists a compaction entry carries in its `details`. */
export interface CompactionFileLists {
	readFiles: string[];
	modifiedFiles: string[];
}

function previousLists(entry: SessionEntry | undefined): CompactionFileLists {
	const details =
		entry?.type === "compaction" ? (entry.details as Partial<CompactionFileLists> | undefined) : undefined;
	const strings = (value: unknown) =>
		Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
	return { readFiles: strings(details?.readFiles), modifiedFiles: strings(details?.modifiedFiles) };
}

/** The lists of the summarized `messages`, with the previous compaction's carried forward. */
export function compactionFileLists(
	messages: readonly AgentMessage[],
	previous: SessionEntry | undefined,
): CompactionFileLists {
	const carried = previousLists(previous);
	const read = new Set(carried.readFiles);
	const modified = new Set(carried.modifiedFiles);
	for (const message of messages) {
		if (message.role !== "assistant") continue;
		for (const part of message.content) {
			if (part.type !== "toolCall") continue;
			const path = (part.arguments as { path?: unknown } | undefined)?.path;
			const list = FILE_TOOLS[part.name];
			if (typeof path !== "string" || !list) continue;
			(list === "read" ? read : modified).add(path);
		}
	}
	return {
		readFiles: [...read].filter((path) => !modified.has(path)).sort(),
		modifiedFiles: [...modified].sort(),
	};
}

/** The text Pi appends to a summary for these lists ("" when both are empty). */
export function fileListsText(lists: CompactionFileLists): string {
	const blocks: string[] = [];
	if (lists.readFiles.length > 0) blocks.push(`<read-files>\n${lists.readFiles.join("\n")}\n</read-files>`);
	if (lists.modifiedFiles.length > 0)
		blocks.push(`<modified-files>\n${lists.modifiedFiles.join("\n")}\n</modified-files>`);
	return blocks.length === 0 ? "" : `\n\n${blocks.join("\n\n")}`;
}
