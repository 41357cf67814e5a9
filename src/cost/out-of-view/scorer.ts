/**
 * The out-of-view scorer (pure): for each recorded reply, which of its
 * references to earlier material the request it answered showed raw, showed
 * only in some other text (a brief or a summary), or did not show at all.
 *
 * Input is a session as a sequence of events (`ScoringEvent`): the messages
 * of the recorded transcript in order, each reply with the request it
 * answered as sent (`SentRequest`, what the model saw). A reference is a
 * token, error fragment or edit anchor line of the reply (references.ts,
 * edits.ts) that occurred in an earlier message of the transcript, not only
 * in the current run's user text (the ask being answered, always in view),
 * and not in the request's system prompt or tool declarations (the model
 * knows those names without history). Its source is the most recent earlier
 * message it occurred in. Against the request:
 * - raw: a segment of the transcript holding it was sent unchanged;
 * - brief: it was sent, but only in text that is not an original segment;
 * - absent: nothing sent holds it.
 *
 * The scorer reads only text the model saw (segments and their keys): it
 * knows no fold, brief or summary format of pi-fold's or Pi's.
 */

import { type EditCall, editCall } from "./edits.ts";
import { anchorKeys, errorFragments, errorLines, type ReferenceKind, textTokens } from "./references.ts";
import type { ViewMessage, ViewSegment } from "./view.ts";

export type ReferenceState = "raw" | "brief" | "absent";

/** A request as the model saw it: its messages, and the tool declarations' text when known. */
export interface SentRequest {
	messages: readonly ViewMessage[];
	declarations?: readonly string[];
}

/**
 * One event of a session, in transcript order: a message joins the history;
 * a reply is scored against the request it answered (when it was sent), then
 * joins the history. A failed reply is no event (providers never see it again).
 */
export type ScoringEvent =
	| { kind: "message"; message: ViewMessage }
	| { kind: "reply"; reply: ViewMessage; sent?: SentRequest; id?: string };

export interface ScoredReference {
	kind: ReferenceKind;
	value: string;
	state: ReferenceState;
	/** Replies between the source and this reply (0: it came in with this request). */
	age: number;
	/** The source segment (the most recent earlier one holding it), an index of the scorer's segments. */
	source: number;
}

export interface ScoredEdit {
	tool: string;
	/** Anchor lines that occurred earlier (the others the model did not need history for). */
	anchors: number;
	absent: number;
	brief: number;
}

/** A source of absent references: what one peek (or re-read) would have to bring back. */
export interface HiddenSource {
	segment: number;
	/** Characters of the source segment (a call: its arguments' JSON). */
	chars: number;
	age: number;
}

export interface ReplyScore {
	/** 0-based index of the reply among the transcript's replies. */
	step: number;
	id?: string;
	references: ScoredReference[];
	edits: ScoredEdit[];
	/** Distinct sources of the absent references, most recent first seen first. */
	hiddenSources: HiddenSource[];
}

/** The scored session: a score per sent reply, and the text of every source segment (for sampling). */
export interface SessionScore {
	replies: ReplyScore[];
	segmentText(segment: number): string;
}

interface IndexedSegment {
	text: string;
	chars: number;
}

/** Every segment seen, by key, with where each token, anchor line and error line occurs. */
class SegmentIndex {
	private readonly ids = new Map<string, number>();
	readonly segments: IndexedSegment[] = [];
	readonly tokens = new Map<string, number[]>();
	readonly anchors = new Map<string, number[]>();
	readonly errors = new Map<string, number[]>();

	intern(segment: ViewSegment): number {
		const known = this.ids.get(segment.key);
		if (known !== undefined) return known;
		const id = this.segments.length;
		this.ids.set(segment.key, id);
		this.segments.push({
			text: segment.text,
			chars: segment.kind === "call" ? segment.key.length : segment.text.length,
		});
		const add = (map: Map<string, number[]>, key: string) => {
			const list = map.get(key);
			if (list) list.push(id);
			else map.set(key, [id]);
		};
		for (const token of textTokens(segment.text)) add(this.tokens, token.value);
		for (const key of anchorKeys(segment.text)) add(this.anchors, key);
		for (const line of errorLines(segment.text)) add(this.errors, line);
		return id;
	}

	/** Segments with an error line that contains `fragment`. */
	errorHolders(fragment: string): number[] {
		const out: number[] = [];
		for (const [line, ids] of this.errors) if (line.includes(fragment)) out.push(...ids);
		return out;
	}
}

/** What the current run's user messages said: references to it need no history. */
interface RunUserText {
	tokens: Set<string>;
	anchors: Set<string>;
	texts: string[];
}

const emptyRunText = (): RunUserText => ({ tokens: new Set(), anchors: new Set(), texts: [] });

/** A reply's candidate references, before they are checked against the history. */
interface Candidates {
	tokens: { kind: ReferenceKind; value: string }[];
	errors: string[];
	edits: EditCall[];
}

function candidatesOf(reply: ViewMessage): Candidates {
	const tokens: Candidates["tokens"] = [];
	const seen = new Set<string>();
	const errors = new Set<string>();
	const edits: EditCall[] = [];
	for (const segment of reply.segments) {
		for (const token of textTokens(segment.text)) {
			if (seen.has(token.value)) continue;
			seen.add(token.value);
			tokens.push(token);
		}
		for (const fragment of errorFragments(segment.text)) errors.add(fragment);
		if (segment.call) {
			const edit = editCall(segment.call.name, segment.call.arguments);
			if (edit) edits.push(edit);
		}
	}
	return { tokens, errors: [...errors], edits };
}

/** Score every sent reply of a session. */
export function scoreReplies(events: Iterable<ScoringEvent>): SessionScore {
	const index = new SegmentIndex();
	/** Step at which each transcript segment last joined the history. */
	const historyStep = new Map<number, number>();
	const prefixTokens = new Map<string, Set<string>>();
	const replies: ReplyScore[] = [];
	let step = 0;
	let runText = emptyRunText();
	let runEnded = false;

	const joinHistory = (message: ViewMessage, at: number) => {
		for (const segment of message.segments) historyStep.set(index.intern(segment), at);
	};

	/** Tokens of the system prompt and declarations, per distinct prefix. */
	const prefixOf = (sent: SentRequest): Set<string> => {
		const texts = [
			...sent.messages.filter((message) => message.role === "system").flatMap((m) => m.segments.map((s) => s.text)),
			...(sent.declarations ?? []),
		];
		const key = texts.join("\u0000");
		let tokens = prefixTokens.get(key);
		if (!tokens) {
			tokens = new Set(texts.flatMap((text) => textTokens(text).map((token) => token.value)));
			prefixTokens.set(key, tokens);
		}
		return tokens;
	};

	const classify = (holders: readonly number[], inRequest: ReadonlySet<number>) => {
		let source: number | undefined;
		let sourceStep = -1;
		let raw = false;
		let seen = false;
		for (const id of holders) {
			const at = historyStep.get(id);
			const sent = inRequest.has(id);
			if (sent) seen = true;
			if (at === undefined) continue;
			if (sent) raw = true;
			if (at >= sourceStep) {
				sourceStep = at;
				source = id;
			}
		}
		if (source === undefined) return undefined;
		const state: ReferenceState = raw ? "raw" : seen ? "brief" : "absent";
		return { state, source, sourceStep };
	};

	const score = (reply: ViewMessage, sent: SentRequest, id: string | undefined): ReplyScore => {
		const inRequest = new Set<number>();
		for (const message of sent.messages) {
			if (message.role === "system") continue;
			for (const segment of message.segments) inRequest.add(index.intern(segment));
		}
		const prefix = prefixOf(sent);
		const candidates = candidatesOf(reply);
		const references: ScoredReference[] = [];
		const push = (kind: ReferenceKind, value: string, holders: readonly number[]) => {
			const found = classify(holders, inRequest);
			if (found)
				references.push({ kind, value, state: found.state, age: step - found.sourceStep, source: found.source });
			return found?.state;
		};
		for (const token of candidates.tokens) {
			if (prefix.has(token.value) || runText.tokens.has(token.value)) continue;
			push(token.kind, token.value, index.tokens.get(token.value) ?? []);
		}
		for (const fragment of candidates.errors) {
			if (runText.texts.some((text) => text.includes(fragment))) continue;
			push("error", fragment, index.errorHolders(fragment));
		}
		const edits: ScoredEdit[] = [];
		for (const edit of candidates.edits) {
			const scored: ScoredEdit = { tool: edit.tool, anchors: 0, absent: 0, brief: 0 };
			for (const anchor of edit.anchors) {
				if (runText.anchors.has(anchor)) continue;
				const state = push("anchor", anchor, index.anchors.get(anchor) ?? []);
				if (state === undefined) continue;
				scored.anchors++;
				if (state === "absent") scored.absent++;
				if (state === "brief") scored.brief++;
			}
			if (scored.anchors > 0) edits.push(scored);
		}
		const hidden = new Map<number, HiddenSource>();
		for (const reference of references) {
			if (reference.state !== "absent" || hidden.has(reference.source)) continue;
			const segment = index.segments[reference.source];
			hidden.set(reference.source, { segment: reference.source, chars: segment?.chars ?? 0, age: reference.age });
		}
		return {
			step,
			...(id === undefined ? {} : { id }),
			references,
			edits,
			hiddenSources: [...hidden.values()],
		};
	};

	for (const event of events) {
		if (event.kind === "message") {
			if (event.message.role === "user") {
				if (runEnded) runText = emptyRunText();
				runEnded = false;
				for (const segment of event.message.segments) {
					for (const token of textTokens(segment.text)) runText.tokens.add(token.value);
					for (const key of anchorKeys(segment.text)) runText.anchors.add(key);
					runText.texts.push(segment.text);
				}
			}
			joinHistory(event.message, step);
			continue;
		}
		if (event.sent) replies.push(score(event.reply, event.sent, event.id));
		joinHistory(event.reply, step);
		runEnded = !event.reply.segments.some((segment) => segment.kind === "call");
		step++;
	}
	return { replies, segmentText: (segment) => index.segments[segment]?.text ?? "" };
}
