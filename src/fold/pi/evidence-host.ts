/**
 * Evidence ingestion in the host: an oversized MCP result becomes a
 * read-only, content-addressed artifact when it is first written, the
 * window gets a bounded head plus the exact recall call, and `peek` of an
 * `evidence:<sha256>` address serves verified slices. Any failure leaves
 * the result exactly as the tool returned it.
 */

import { PEEK_MAX_BYTES } from "../actions/peek.ts";
import type { SourceBytes } from "../actions/search.ts";
import type { ActionOutcome } from "../engine/workspace.ts";
import type { ResolvedOptions } from "../options.ts";
import {
	disabledEvidence,
	type EvidenceFacts,
	evidenceOwner,
	evidenceWindowText,
	parseEvidenceAddress,
	type ToolResultShape,
} from "../store/evidence.ts";
import { EvidenceStore, evidenceDir } from "../store/evidence-store.ts";
import { FoldIntegrityError, FoldStoreError } from "../store/store.ts";

export class EvidenceHost {
	private options: ResolvedOptions;
	/** This session's evidence artifacts (a store with no root when the session has no file). */
	private evidence = new EvidenceStore(undefined);

	constructor(options: ResolvedOptions) {
		this.options = options;
	}

	/** The options in force from now on (a new value; the runtime's `configure`). */
	configure(options: ResolvedOptions): void {
		this.options = options;
	}

	/** Point at a session's evidence directory (start, resume, navigation). */
	open(file: string | undefined, sessionDir: string, sessionId: string): void {
		this.evidence = openEvidence(file, sessionDir, sessionId, this.options.entryTypePrefix);
	}

	/** An oversized MCP result becomes evidence; anything else (or any failure) leaves the result as it was. */
	async onToolResult(event: ToolResultShape): Promise<{ content: { type: "text"; text: string }[] } | undefined> {
		let mcp = false;
		try {
			mcp = this.options.isMcpTool(event.toolName) === true;
		} catch {
			mcp = false;
		}
		if (!mcp) return undefined;
		const outcome = await this.evidence.ingest(event);
		if (!outcome.ingested) return undefined;
		const text = evidenceWindowText({
			result: event,
			hash: outcome.hash,
			bytes: outcome.bytes,
			owner: evidenceOwner(event.toolName, this.options.entryTypePrefix),
			brandNoun: this.options.brandNoun,
			contextToolName: this.options.toolName,
		});
		return { content: [{ type: "text", text }] };
	}

	/** `peek` of an `evidence:<sha256>` address: a verified slice of the artifact. */
	async peek(id: string, offset = 0, bytes = PEEK_MAX_BYTES): Promise<ActionOutcome> {
		const hash = parseEvidenceAddress(id);
		if (!hash)
			return { ok: false, code: "unknown-id", text: `"${id}" is not an evidence address (evidence:<sha256>).` };
		try {
			const slice = await this.evidence.read(hash, offset, bytes);
			const next =
				slice.nextOffset === undefined
					? "This is the end of the artifact."
					: `More follows: ${this.options.toolName} ${JSON.stringify({ action: "peek", id, offset: slice.nextOffset })}`;
			const header = [
				`Evidence ${hash}, sha256 verified: the canonical JSON of the tool result exactly as the tool returned it.`,
				`Bytes ${slice.offset}–${slice.end} of ${slice.totalBytes}. ${next}`,
				"The window is unchanged.",
			];
			return { ok: true, text: `${header.join("\n")}\n\n${slice.text}` };
		} catch (error) {
			return evidenceFailure(hash, error);
		}
	}

	/** This session's artifacts, each with a verified whole read, for search. */
	async artifacts(): Promise<{ hash: string; read(): Promise<SourceBytes> }[]> {
		const hashes = await this.evidence.list().catch(() => [] as string[]);
		return hashes.map((hash) => ({
			hash,
			read: async (): Promise<SourceBytes> => {
				try {
					return { ok: true, bytes: await this.evidence.readWhole(hash) };
				} catch (error) {
					const failure = evidenceFailure(hash, error);
					return { ok: false, code: failure.code ?? "io", message: failure.text };
				}
			},
		}));
	}

	/** Evidence facts for status. */
	facts(): EvidenceFacts {
		return this.options.evidenceIngestion ? this.evidence.facts(true) : disabledEvidence();
	}
}

/** The session's evidence directory; a session without a file (or with an unusable id, said so) ingests nothing. */
function openEvidence(file: string | undefined, sessionDir: string, sessionId: string, prefix: string): EvidenceStore {
	if (!file) return new EvidenceStore(undefined);
	try {
		return new EvidenceStore(evidenceDir(sessionDir, sessionId, prefix));
	} catch (error) {
		if (!(error instanceof FoldStoreError)) throw error;
		return new EvidenceStore(undefined, undefined, error.message);
	}
}

/**
 * Why an artifact could not be served, in evidence's own words and with the
 * store's code (`integrity`, `missing`, `io`, …): the blob store's messages
 * speak of folds, whose bytes the log can rebuild; an artifact has no such
 * second copy (the window holds only its head).
 */
function evidenceFailure(hash: string, error: unknown): ActionOutcome {
	if (error instanceof FoldIntegrityError)
		return {
			ok: false,
			code: "integrity",
			text: `Evidence artifact ${error.location ?? hash} fails SHA-256 verification (expected ${error.expectedHash}, found ${error.actualHash}): it was altered after it was written, so nothing is served. No other copy exists (the window holds only its first bytes); restore the file from a backup.`,
		};
	if (error instanceof FoldStoreError && error.code === "missing")
		return {
			ok: false,
			code: "missing",
			text: `Evidence ${hash} is not in this session's evidence directory (${error.location ?? "unknown"}); it was removed, or belongs to another session.`,
		};
	const code = error instanceof FoldStoreError ? error.code : "io";
	return {
		ok: false,
		code,
		text: `Evidence ${hash} could not be read: ${error instanceof Error ? error.message : String(error)}`,
	};
}
