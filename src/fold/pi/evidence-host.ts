/**
 * Evidence ingestion in the host: an oversized MCP result becomes a
 * read-only, content-addressed artifact when it is first written, the
 * window gets a bounded head plus the exact recall call, and `peek` of an
 * `evidence:<sha256>` address serves verified slices. Any failure leaves
 * the result exactly as the tool returned it.
 */

import { type ActionOutcome, PEEK_MAX_BYTES } from "../actions/actions.ts";
import type { SourceBytes } from "../actions/search.ts";
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
import { FoldStoreError } from "../store/store.ts";

export class EvidenceHost {
	private readonly options: ResolvedOptions;
	/** This session's evidence artifacts (a store with no root when the session has no file). */
	private evidence = new EvidenceStore(undefined);

	constructor(options: ResolvedOptions) {
		this.options = options;
	}

	/** Point at a session's evidence directory (start, resume, navigation). */
	open(file: string | undefined, sessionDir: string, sessionId: string): void {
		this.evidence = openEvidence(file, sessionDir, sessionId);
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
			const message = error instanceof Error ? error.message : String(error);
			return { ok: false, code: "unknown-id", text: `Evidence ${hash} could not be read: ${message}` };
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
					const code = error instanceof FoldStoreError ? error.code : "io";
					return { ok: false, code, message: error instanceof Error ? error.message : String(error) };
				}
			},
		}));
	}

	/** Evidence facts for status. */
	facts(): EvidenceFacts {
		return this.options.evidenceIngestion ? this.evidence.facts(true) : disabledEvidence();
	}
}

/** The session's evidence directory; a session without a file (or with an unusable id) ingests nothing. */
function openEvidence(file: string | undefined, sessionDir: string, sessionId: string): EvidenceStore {
	if (!file) return new EvidenceStore(undefined);
	try {
		return new EvidenceStore(evidenceDir(sessionDir, sessionId));
	} catch (error) {
		if (!(error instanceof FoldStoreError)) throw error;
		return new EvidenceStore(undefined);
	}
}
