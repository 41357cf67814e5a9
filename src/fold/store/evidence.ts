/**
 * Evidence ingestion, the pure half: which tool results become evidence,
 * who owns them, what the artifact holds and what the window shows instead.
 *
 * An MCP tool's result (the host's `isMcpTool` says which tools are MCP
 * tools) is oversized when its artifact, the canonical JSON of
 * `{ content, structuredContent? }` exactly as the tool returned it, is
 * larger than `EVIDENCE_OVERSIZED_BYTES`. Such a result is written once as a
 * read-only content-addressed artifact (`evidence-store.ts`) and the
 * `tool_result` hook replaces what the model sees with `evidenceWindowText`:
 * the tool, the size, the owner, the artifact's SHA-256, how to read it back
 * (`<toolName> {"action":"peek","id":"evidence:<sha256>"}`, paged with
 * offset/bytes, verified on every read) and a bounded head of the result's
 * text. The replacement is written when the result is, so it is part of the
 * transcript from the start: nothing is rewritten later. Anything that goes
 * wrong (no session file, the session cap, a failed write) leaves the result
 * exactly as it was.
 */

import { canonicalBytes } from "../../session/canonical.ts";
import { utf8SliceBounds } from "./store.ts";

/** Directory under the session directory holding every session's evidence. */
export const EVIDENCE_DIR_NAME = "pi-fold-evidence";

/**
 * The evidence directory's name in a namespace: the prefix's product part
 * (the default prefix less "-active-context") and "-evidence", so the
 * default is `pi-fold-evidence` and another prefix keeps its own artifacts.
 */
export function evidenceDirName(entryTypePrefix: string): string {
	return `${entryTypePrefix.replace(/-active-context$/, "")}-evidence`;
}
/** Evidence directories are private to the user: results can carry anything a server returned. */
export const EVIDENCE_DIR_MODE = 0o700;
/**
 * Oversized: above 32 KiB (~8k tokens by Pi's chars/4) one result costs more
 * window than twenty full briefs; below it an artifact saves too little to
 * be worth a second read.
 */
export const EVIDENCE_OVERSIZED_BYTES = 32 * 1024;
/** Evidence written per session, summed over every artifact; past it nothing more is ingested. */
export const EVIDENCE_SESSION_CAP_BYTES = 512 * 1024 * 1024;
/** Bytes of the result's text the window keeps, so the agent sees what came back without a peek. */
export const EVIDENCE_HEAD_BYTES = 2_000;
/** Peek address prefix of an artifact: `evidence:<sha256>`. */
export const EVIDENCE_ADDRESS_PREFIX = "evidence:";

const MCP_NAME = /^mcp__(.+?)__(.+)$/;
const EVIDENCE_ADDRESS = /^evidence:([0-9a-f]{64})$/;

export interface EvidenceOwner {
	/** The MCP server, parsed from `mcp__<server>__<tool>`, or the namespace when the name has no server. */
	server: string;
	/** Always the namespace derived from `entryTypePrefix` (who ingested it). */
	namespace: string;
	/** True when `server` came from the tool name. */
	parsed: boolean;
}

/** Who owns a tool's evidence: the server the name projects, else the package's namespace. */
export function evidenceOwner(toolName: string, entryTypePrefix: string): EvidenceOwner {
	const server = MCP_NAME.exec(toolName)?.[1];
	return server
		? { server, namespace: entryTypePrefix, parsed: true }
		: { server: entryTypePrefix, namespace: entryTypePrefix, parsed: false };
}

/** The result a tool returned, as the hook sees it. */
export interface ToolResultShape {
	toolName: string;
	toolCallId: string;
	content: readonly ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];
	structuredContent?: unknown;
}

/** The artifact's bytes: the result exactly as returned, canonical JSON. */
export function evidenceArtifact(result: ToolResultShape): Uint8Array {
	return canonicalBytes(
		result.structuredContent === undefined
			? { content: result.content }
			: { content: result.content, structuredContent: result.structuredContent },
	);
}

export function isOversized(bytes: number, threshold = EVIDENCE_OVERSIZED_BYTES): boolean {
	return bytes > threshold;
}

/** The artifact hash an `evidence:<sha256>` address names, or undefined. */
export function parseEvidenceAddress(id: string): string | undefined {
	return EVIDENCE_ADDRESS.exec(id)?.[1];
}

/** How an ingested result's window text names its artifact: the peek call's JSON (`evidenceWindowText`). */
const EVIDENCE_PEEK_ID = /"id":"evidence:([0-9a-f]{64})"/g;

/**
 * Artifact hashes the transcript names, each with the first entry naming it:
 * every tool result whose text holds an ingested result's peek call.
 */
export function evidenceReferences(
	entries: readonly { id: string; type: string; message?: unknown }[],
): Map<string, string> {
	const found = new Map<string, string>();
	for (const entry of entries) {
		const message = entry.type === "message" ? (entry.message as { role?: unknown; content?: unknown }) : undefined;
		if (message?.role !== "toolResult" || !Array.isArray(message.content)) continue;
		for (const part of message.content as { type?: unknown; text?: unknown }[]) {
			if (part?.type !== "text" || typeof part.text !== "string" || !part.text.includes(EVIDENCE_ADDRESS_PREFIX))
				continue;
			for (const match of part.text.matchAll(EVIDENCE_PEEK_ID))
				if (match[1] && !found.has(match[1])) found.set(match[1], entry.id);
		}
	}
	return found;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

/** The first `limit` UTF-8 bytes of the result's text parts, on a character boundary. */
export function textHead(result: ToolResultShape, limit = EVIDENCE_HEAD_BYTES): { text: string; truncated: boolean } {
	const parts = result.content.map((part) => (part.type === "text" ? part.text : `[image ${part.mimeType}]`));
	const bytes = encoder.encode(parts.join("\n"));
	if (bytes.length <= limit) return { text: decoder.decode(bytes), truncated: false };
	const { end } = utf8SliceBounds(bytes, 0, limit);
	return { text: decoder.decode(bytes.slice(0, end)), truncated: true };
}

const integer = new Intl.NumberFormat("en-US");

export interface EvidenceWindowInput {
	result: ToolResultShape;
	hash: string;
	bytes: number;
	owner: EvidenceOwner;
	brandNoun: string;
	contextToolName: string;
}

/** What the window shows in place of an ingested result. Bounded: a fixed header plus the head. */
export function evidenceWindowText(input: EvidenceWindowInput): string {
	const { result, hash, owner } = input;
	const head = textHead(result);
	const peek = JSON.stringify({ action: "peek", id: `${EVIDENCE_ADDRESS_PREFIX}${hash}` });
	const from = owner.parsed ? `MCP server "${owner.server}"` : `owner ${owner.namespace}`;
	return [
		`[${input.brandNoun} evidence] ${result.toolName} (${from}) returned ${integer.format(input.bytes)} bytes, more than the ${integer.format(EVIDENCE_OVERSIZED_BYTES)} a result keeps in the window.`,
		`The exact result is stored as read-only evidence, sha256 ${hash}. Read it back: ${input.contextToolName} ${peek} (add "offset"/"bytes" for slices; every read is SHA-256 verified). It is the canonical JSON of the result's content${result.structuredContent === undefined ? "" : " and structuredContent"}.`,
		head.truncated ? `First ${integer.format(EVIDENCE_HEAD_BYTES)} bytes of its text:` : "Its text:",
		head.text,
		...(head.truncated ? ["[…]"] : []),
	].join("\n");
}

/** Evidence facts for status. */
export interface EvidenceFacts {
	enabled: boolean;
	/** Where artifacts go; undefined when the session has no file (nothing is ingested). */
	location: string | undefined;
	/** Why a session with a file still has no evidence directory (a session id no directory can be named by). */
	unavailable?: string;
	artifacts: number;
	bytes: number;
	capBytes: number;
	/** Oversized results left as they were because the cap was reached. */
	refusedOverCap: number;
	/** Oversized results left as they were because the write failed. */
	failed: number;
	lastError: string | undefined;
}

export function disabledEvidence(): EvidenceFacts {
	return {
		enabled: false,
		location: undefined,
		artifacts: 0,
		bytes: 0,
		capBytes: EVIDENCE_SESSION_CAP_BYTES,
		refusedOverCap: 0,
		failed: 0,
		lastError: undefined,
	};
}

/** One status line, or undefined when there is nothing to say. */
export function formatEvidence(facts: EvidenceFacts): string | undefined {
	if (!facts.enabled) return undefined;
	const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
	const why = facts.unavailable ? `no evidence directory: ${facts.unavailable}` : "this session has no file";
	const where = facts.location ?? `nowhere (${why}, so results stay as they are)`;
	const parts = [
		`Evidence: ${facts.artifacts} artifacts, ${mb(facts.bytes)} of the ${mb(facts.capBytes)} session cap, in ${where}.`,
	];
	if (facts.refusedOverCap > 0)
		parts.push(
			`Session cap reached: ${facts.refusedOverCap} oversized results were not ingested and stay in the window as returned.`,
		);
	if (facts.failed > 0)
		parts.push(
			`${facts.failed} evidence writes failed (${facts.lastError ?? "unknown"}); those results stay as returned.`,
		);
	return parts.join(" ");
}
