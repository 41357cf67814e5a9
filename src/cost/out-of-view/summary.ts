/**
 * A scored session's figures (pure): how many replies referenced something
 * their request did not show, how many edits could not see the lines they
 * quote, and how old the hidden references were. One function for every
 * arm, the benchmark's and the report's.
 */

import type { ReplyScore } from "./scorer.ts";

export interface OutOfViewSummary {
	/** Replies scored (the replies that were sent a request). */
	replies: number;
	/** Replies with at least one absent reference. */
	repliesWithAbsent: number;
	/** Replies with a reference shown only in a brief or summary, and none absent. */
	repliesWithBriefOnly: number;
	references: { raw: number; brief: number; absent: number };
	/** Edits with at least one anchor line that occurred earlier. */
	edits: number;
	/** Of those, edits with at least one anchor line absent from the request. */
	editsWithAbsentAnchors: number;
	/** Median age in replies of the absent references; undefined when there is none. */
	medianAbsentAge: number | undefined;
	/** Hidden sources over all replies (what the charged cost pays a search and a peek for, each). */
	hiddenSources: number;
}

/** The median of `values` (undefined when empty). */
export function median(values: readonly number[]): number | undefined {
	if (values.length === 0) return undefined;
	const sorted = [...values].sort((a, b) => a - b);
	const middle = sorted.length >> 1;
	return sorted.length % 2 === 1
		? (sorted[middle] as number)
		: ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The figures of a session's reply scores. */
export function outOfViewSummary(replies: readonly ReplyScore[]): OutOfViewSummary {
	const references = { raw: 0, brief: 0, absent: 0 };
	const ages: number[] = [];
	let repliesWithAbsent = 0;
	let repliesWithBriefOnly = 0;
	let edits = 0;
	let editsWithAbsentAnchors = 0;
	let hiddenSources = 0;
	for (const reply of replies) {
		let absent = false;
		let brief = false;
		for (const reference of reply.references) {
			references[reference.state]++;
			if (reference.state === "absent") {
				absent = true;
				ages.push(reference.age);
			}
			if (reference.state === "brief") brief = true;
		}
		if (absent) repliesWithAbsent++;
		else if (brief) repliesWithBriefOnly++;
		edits += reply.edits.length;
		editsWithAbsentAnchors += reply.edits.filter((edit) => edit.absent > 0).length;
		hiddenSources += reply.hiddenSources.length;
	}
	return {
		replies: replies.length,
		repliesWithAbsent,
		repliesWithBriefOnly,
		references,
		edits,
		editsWithAbsentAnchors,
		medianAbsentAge: median(ages),
		hiddenSources,
	};
}
