/**
 * The anchor lines an edit must quote (pure): the exact text a model has to
 * reproduce for the edit to apply, so whether it could see that text is a
 * reference that cannot be approximated.
 *
 * Recognised by the shape of the arguments, whatever the tool is called:
 * - a replacement's old text: Pi's `edit` (`edits[].oldText`, or a top-level
 *   `oldText` in older versions), Claude Code's `Edit` (`old_string`) and
 *   `MultiEdit` (`edits[].old_string`), and `old_str` editors;
 * - a Codex `apply_patch` patch (`*** Begin Patch`, in any string argument,
 *   also a shell command that pipes one in): each updated file's context
 *   lines (` `) and removed lines (`-`).
 * Added text is not an anchor: the model writes it.
 */

import { anchorKey } from "./references.ts";
import { stringLeaves } from "./view.ts";

/** Argument names that carry a replacement's old text. */
const OLD_TEXT_FIELDS = ["oldText", "old_string", "old_str"] as const;
/** The marker a Codex patch starts with. */
const PATCH_BEGIN = "*** Begin Patch";
/** A patch line that names a file: hunks after `*** Update File:` quote that file. */
const PATCH_FILE_LINE = /^\*\*\* (Update|Add|Delete) File:/;

export interface EditCall {
	/** The tool name as called. */
	tool: string;
	/** Distinct anchor keys (trimmed lines long enough to point somewhere). */
	anchors: string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Old texts of a replacement-shaped argument object (top level, or each of `edits`). */
function oldTexts(args: Record<string, unknown>): string[] {
	const out: string[] = [];
	const take = (record: Record<string, unknown>) => {
		for (const field of OLD_TEXT_FIELDS) {
			const value = record[field];
			if (typeof value === "string") out.push(value);
		}
	};
	take(args);
	if (Array.isArray(args.edits)) for (const edit of args.edits) if (isRecord(edit)) take(edit);
	return out;
}

/** The context and removed lines of a Codex patch's updated files. */
export function patchAnchorLines(patch: string): string[] {
	const lines: string[] = [];
	let updating = false;
	for (const line of patch.split("\n")) {
		const file = PATCH_FILE_LINE.exec(line);
		if (file) {
			updating = file[1] === "Update";
			continue;
		}
		if (!updating || line.startsWith("***") || line.startsWith("@@")) continue;
		if (line.startsWith(" ") || line.startsWith("-")) lines.push(line.slice(1));
	}
	return lines;
}

/** The edit a call makes, or undefined when it is not an edit (or quotes nothing long enough to count). */
export function editCall(name: string, args: unknown): EditCall | undefined {
	const quoted: string[] = [];
	if (isRecord(args)) for (const text of oldTexts(args)) quoted.push(...text.split("\n"));
	for (const leaf of stringLeaves(args)) if (leaf.includes(PATCH_BEGIN)) quoted.push(...patchAnchorLines(leaf));
	const anchors = [...new Set(quoted.flatMap((line) => anchorKey(line) ?? []))];
	return anchors.length === 0 ? undefined : { tool: name, anchors };
}
