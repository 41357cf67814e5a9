/**
 * Suggestion sources: the registration surface the spec keeps while
 * rendering stays off.
 *
 * A host gets `register` through `setSuggestionSourceRegistrar`; a source
 * registers under an id and reports whether the agent accepted a suggestion
 * it made. Each report persists as one custom entry
 * (`<prefix>:suggestion-accept`), which Pi keeps out of the model's context,
 * so nothing a source does changes the window: a slate shown on one request
 * and withdrawn on the next is a show-then-retract that kills the cached
 * prefix (spec, "What the invariant cost"). Nothing here renders anything.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** Longest source id, suggestion id or note kept; a report is bookkeeping, not a payload. */
export const SUGGESTION_TEXT_MAX_CHARS = 256;
/** Source ids are one plain token, like custom-entry types. */
const SOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface SuggestionSource {
	id: string;
	label?: string;
}

export interface SuggestionAcceptReport {
	suggestionId: string;
	accepted: boolean;
	/** The fold the suggestion was about, when it was about one. */
	foldId?: string;
	note?: string;
}

export interface SuggestionSourceHandle {
	/** Persist one accept report (at the next turn boundary, or at once when Pi is idle). */
	reportAccept(report: SuggestionAcceptReport): void;
	unregister(): void;
}

/** What `setSuggestionSourceRegistrar` receives. Throws a named error for a bad source or report. */
export type RegisterSuggestionSource = (source: SuggestionSource) => SuggestionSourceHandle;

/** Data of one persisted accept report. */
export interface SuggestionAcceptData {
	v: 1;
	sourceId: string;
	suggestionId: string;
	accepted: boolean;
	foldId?: string;
	note?: string;
	at: number;
}

export function suggestionEntryType(prefix: string): string {
	return `${prefix}:suggestion-accept`;
}

const fail = (message: string): never => {
	throw new Error(`pi-fold suggestion source: ${message}`);
};

function boundedText(name: string, value: unknown, required: boolean): string | undefined {
	if (value === undefined && !required) return undefined;
	if (typeof value !== "string" || value.length === 0) return fail(`${name} must be a non-empty string`);
	if (value.length > SUGGESTION_TEXT_MAX_CHARS) return fail(`${name} is longer than ${SUGGESTION_TEXT_MAX_CHARS}`);
	return value;
}

/** The entry data for one report, or a named error. */
export function acceptData(sourceId: string, report: SuggestionAcceptReport, at: number): SuggestionAcceptData {
	if (typeof report !== "object" || report === null) fail("a report must be an object { suggestionId, accepted }");
	if (typeof report.accepted !== "boolean") fail("accepted must be true or false");
	const data: SuggestionAcceptData = {
		v: 1,
		sourceId,
		suggestionId: boundedText("suggestionId", report.suggestionId, true) as string,
		accepted: report.accepted,
		at,
	};
	const foldId = boundedText("foldId", report.foldId, false);
	const note = boundedText("note", report.note, false);
	if (foldId !== undefined) data.foldId = foldId;
	if (note !== undefined) data.note = note;
	return data;
}

/** Accept reports persisted on a branch, oldest first. */
export function readAcceptReports(branch: readonly SessionEntry[], prefix: string): SuggestionAcceptData[] {
	const type = suggestionEntryType(prefix);
	const out: SuggestionAcceptData[] = [];
	for (const entry of branch) {
		if (entry.type !== "custom" || entry.customType !== type) continue;
		const data = entry.data as Partial<SuggestionAcceptData> | undefined;
		if (data?.v === 1 && typeof data.sourceId === "string" && typeof data.accepted === "boolean")
			out.push(data as SuggestionAcceptData);
	}
	return out;
}

/** Registered sources; `persist` is the runtime's queue for custom entries. */
export class SuggestionRegistry {
	private readonly sources = new Map<string, SuggestionSource>();
	private readonly persist: (data: SuggestionAcceptData) => void;
	private readonly now: () => number;

	constructor(persist: (data: SuggestionAcceptData) => void, now: () => number = Date.now) {
		this.persist = persist;
		this.now = now;
	}

	readonly register: RegisterSuggestionSource = (source) => {
		if (typeof source !== "object" || source === null) fail("register takes { id, label? }");
		const id = source.id;
		if (typeof id !== "string" || !SOURCE_ID.test(id))
			fail(`id ${JSON.stringify(id)} must be letters, digits, ".", "_", ":" or "-" (at most 128)`);
		if (this.sources.has(id)) fail(`a source with id ${JSON.stringify(id)} is already registered`);
		this.sources.set(id, source);
		return {
			reportAccept: (report) => {
				if (!this.sources.has(id)) fail(`source ${JSON.stringify(id)} is unregistered`);
				this.persist(acceptData(id, report, this.now()));
			},
			unregister: () => {
				this.sources.delete(id);
			},
		};
	};

	ids(): string[] {
		return [...this.sources.keys()];
	}
}
