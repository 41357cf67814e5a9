/**
 * The carry-forward list: items another extension (or a host) wants every
 * later summary to restate under `[Carry Forward]`. It is durable session
 * state, one `custom` entry per change; the latest valid carry entry on the
 * active branch wins, so it is branch-relative and survives a reload.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import { utf8ByteLength } from "../../text/utf8.ts";

/** Custom entry type of a carry-forward change (pi-fold's own record, not a pi-fabric wire name). */
export const CARRY_ENTRY_TYPE = "pi-fold.compaction-carry";
/** Version of the carry entry's data. */
export const CARRY_VERSION = 1;
/** The rendered `[Carry Forward]` block's ceiling; the list is refused rather than silently clipped above it. */
export const MAX_CARRY_BYTES = 3 * 1024;
/** Items per list: a handful of durable focus points, not a second summary. */
export const MAX_CARRY_ITEMS = 16;

export interface CarryData {
	version: typeof CARRY_VERSION;
	items: string[];
}

export type CarryCheck = { ok: true; items: string[] } | { ok: false; error: string };

/**
 * A carry list is accepted when it holds at most `MAX_CARRY_ITEMS` non-empty
 * strings whose `- item` lines total at most `MAX_CARRY_BYTES` UTF-8 bytes.
 */
export function checkCarry(items: unknown): CarryCheck {
	if (!Array.isArray(items)) return { ok: false, error: "carry items must be an array of strings" };
	if (items.length > MAX_CARRY_ITEMS)
		return { ok: false, error: `carry has ${items.length} items, the limit is ${MAX_CARRY_ITEMS}` };
	const clean: string[] = [];
	for (const item of items) {
		if (typeof item !== "string") return { ok: false, error: "carry items must be strings" };
		const trimmed = item.trim();
		if (trimmed !== "") clean.push(trimmed);
	}
	const bytes = clean.reduce((sum, item) => sum + utf8ByteLength(`- ${item}\n`), 0);
	if (bytes > MAX_CARRY_BYTES) return { ok: false, error: `carry is ${bytes} bytes, the limit is ${MAX_CARRY_BYTES}` };
	return { ok: true, items: clean };
}

/** The carry data of one entry, when it is a valid carry entry. */
export function carryOf(entry: SessionEntry): string[] | undefined {
	if (entry.type !== "custom" || entry.customType !== CARRY_ENTRY_TYPE) return undefined;
	const data = entry.data;
	if (!isPlainRecord(data) || data.version !== CARRY_VERSION) return undefined;
	const checked = checkCarry(data.items);
	return checked.ok ? checked.items : undefined;
}

/** The latest valid carry list on the branch (root first); empty when none. */
export function latestCarry(branch: readonly SessionEntry[]): string[] {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		const items = entry ? carryOf(entry) : undefined;
		if (items) return items;
	}
	return [];
}
