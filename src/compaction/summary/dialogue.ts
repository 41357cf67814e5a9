/**
 * Protected recent dialogue: the last three eligible user exchanges, each with
 * the text-bearing assistant response that preceded it.
 *
 * An exchange is one raw user message plus the last text-bearing assistant
 * entry since the previous user message. Exchanges whose user message was
 * summarized are eligible; an exchange whose assistant response was
 * summarized but whose user reply sits in the kept raw tail crosses the cut:
 * the response stays inline and the reply is addressed as `retained raw`.
 * The final answer (the last summarized response, which no user message
 * followed) takes the newest slot under its own label, so a long last answer
 * keeps its head and tail rather than one line elsewhere.
 * Fully raw exchanges are dropped before the three-exchange limit, so neither
 * they nor tool volume can age a summarized exchange out. Nothing is inferred
 * from prose: no acceptance, supersession or reset detection.
 *
 * Each exchange is bounded to 3,968 UTF-8 bytes including its headings. Text
 * is quoted line by line ("> "), so no dialogue line can pose as a section
 * header. When an exchange does not fit, user text gets at least half the
 * text budget (short replies leave the rest to the assistant) and each side
 * keeps its head and tail around an explicit omitted-byte marker.
 */

import type { AssistantEvent, NormalizedEvent, UserEvent } from "../../session/events.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import { excerptMiddle, multiLine, renderAddress } from "./render-text.ts";

export const DIALOGUE_HEADER = "[Recent user directions and discussion]";
export const DIALOGUE_INTRO = "Source evidence, oldest first; raw messages after this summary take precedence.";
export const DIALOGUE_EXCHANGE_LIMIT = 3;
/** Bytes per exchange, headings included. */
export const DIALOGUE_EXCHANGE_MAX_BYTES = 3968;
export const ASSISTANT_RESPONSE_LABEL = "**Historical assistant response (not a verified outcome)**";
/** How a crossing exchange addresses its user reply, which stays in the kept raw tail. */
export const RETAINED_RAW = "retained raw";
const QUOTE = "> ";

export interface DialogueExchange {
	/** Absent for the final answer: the last response, which no user message followed. */
	user?: UserEvent;
	assistant?: AssistantEvent;
	/** True when the user reply is in the kept raw tail and only the response was summarized. */
	crossing: boolean;
}

/** How the final answer's exchange is titled: the last response, which no user message has answered yet. */
export const FINAL_ANSWER_LABEL = "**Final assistant response (not a verified outcome)**";

export interface RenderedExchange extends DialogueExchange {
	text: string;
	/** Source UTF-8 bytes of dialogue text replaced by omitted-byte markers. */
	omittedBytes: number;
}

export interface RenderedDialogue {
	/** The whole block including its header, or "" when there is no eligible exchange. */
	text: string;
	exchanges: RenderedExchange[];
	omittedBytes: number;
}

/** Select the last three eligible exchanges from all normalized events (prefix, then kept tail). */
export function selectDialogueExchanges(events: readonly NormalizedEvent[], cutEventIndex: number): DialogueExchange[] {
	const eligible: DialogueExchange[] = [];
	let pending: { event: AssistantEvent; index: number } | undefined;
	events.forEach((event, index) => {
		if (event.origin !== "raw") return;
		if (event.kind === "assistant" && event.text.trim()) pending = { event, index };
		if (event.kind !== "user") return;
		const summarized = index < cutEventIndex;
		const crossing = !summarized && pending !== undefined && pending.index < cutEventIndex;
		if (summarized || crossing) {
			eligible.push({ user: event, ...(pending ? { assistant: pending.event } : {}), crossing });
		}
		pending = undefined;
	});
	// The final answer: a summarized response no user message followed. Protected like an exchange,
	// so a long last answer keeps its head and tail instead of one line in the status block.
	if (pending && pending.index < cutEventIndex) eligible.push({ assistant: pending.event, crossing: false });
	return eligible.slice(-DIALOGUE_EXCHANGE_LIMIT);
}

function quote(text: string): string {
	return text
		.split("\n")
		.map((line) => (line ? QUOTE + line : QUOTE.trimEnd()))
		.join("\n");
}

/** Quoted excerpt of `text` within `maxBytes`, shrinking the raw budget until quoting fits too. */
function fitQuoted(text: string, maxBytes: number): { text: string; omittedBytes: number } {
	let rawBudget = maxBytes;
	for (;;) {
		const excerpt = excerptMiddle(text, rawBudget);
		const quoted = quote(excerpt.text);
		const over = utf8ByteLength(quoted) - maxBytes;
		if (over <= 0 || rawBudget <= 0) return { text: over <= 0 ? quoted : "", omittedBytes: excerpt.omittedBytes };
		rawBudget = Math.max(0, rawBudget - over);
	}
}

function plural(count: number, noun: string): string {
	return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Render one exchange within `DIALOGUE_EXCHANGE_MAX_BYTES`. */
export function renderExchange(exchange: DialogueExchange, position: number, total: number): RenderedExchange {
	const { user, assistant, crossing } = exchange;
	const images = user && user.images > 0 ? ` (${plural(user.images, "image")})` : "";
	const title = `Exchange ${position} of ${total}`;
	const label = user ? ASSISTANT_RESPONSE_LABEL : FINAL_ANSWER_LABEL;
	const assistantHeading = assistant ? `${label} ${renderAddress(assistant.address)}:` : undefined;
	const userAddress = user ? renderAddress(user.address) : "";
	const userHeading = !user
		? undefined
		: crossing
			? `User ${userAddress}: ${RETAINED_RAW}`
			: `User ${userAddress}${images}:`;
	const assistantText = assistant ? multiLine(assistant.text) : "";
	const userText = crossing || !user ? "" : multiLine(user.text);

	const headings = [title, assistantHeading, userHeading].filter((line): line is string => line !== undefined);
	const textBlocks = (assistantText ? 1 : 0) + (userText ? 1 : 0);
	const joins = headings.length + textBlocks - 1;
	const available = DIALOGUE_EXCHANGE_MAX_BYTES - joins - headings.reduce((sum, line) => sum + utf8ByteLength(line), 0);

	const userNeed = userText ? utf8ByteLength(quote(userText)) : 0;
	const assistantNeed = assistantText ? utf8ByteLength(quote(assistantText)) : 0;
	// User text gets at least half when both overflow; a short side leaves its slack to the other.
	const userAllocation = Math.min(userNeed, Math.max(Math.ceil(available / 2), available - assistantNeed));
	const fittedUser = userText ? fitQuoted(userText, userAllocation) : { text: "", omittedBytes: 0 };
	const fittedAssistant = assistantText
		? fitQuoted(assistantText, available - utf8ByteLength(fittedUser.text))
		: { text: "", omittedBytes: 0 };

	const lines = [title];
	if (assistantHeading) lines.push(assistantHeading);
	if (fittedAssistant.text) lines.push(fittedAssistant.text);
	if (userHeading) lines.push(userHeading);
	if (fittedUser.text) lines.push(fittedUser.text);
	return {
		...exchange,
		text: lines.join("\n"),
		omittedBytes: fittedUser.omittedBytes + fittedAssistant.omittedBytes,
	};
}

/** The protected dialogue block for the summarized prefix plus crossing exchanges. */
export function renderDialogue(events: readonly NormalizedEvent[], cutEventIndex: number): RenderedDialogue {
	const selected = selectDialogueExchanges(events, cutEventIndex);
	if (selected.length === 0) return { text: "", exchanges: [], omittedBytes: 0 };
	const exchanges = selected.map((exchange, index) => renderExchange(exchange, index + 1, selected.length));
	return {
		text: `${DIALOGUE_HEADER}\n${DIALOGUE_INTRO}\n\n${exchanges.map((exchange) => exchange.text).join("\n\n")}`,
		exchanges,
		omittedBytes: exchanges.reduce((sum, exchange) => sum + exchange.omittedBytes, 0),
	};
}
