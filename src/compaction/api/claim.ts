/**
 * The compaction owner claim: another extension takes compaction alone. One
 * holder at a time; the claim ends when the holder withdraws it, when its
 * abort signal fires, or when the session shuts down. While a claim is held
 * the deterministic compactor neither triggers nor defers compaction; it
 * also leaves `/tree` summaries to the owner when the claim says
 * `branchSummary: true`.
 */

export interface OwnerClaimRequest {
	/** Who holds the claim, shown by `compact.status()`. */
	holder: string;
	/** Aborting it releases the claim. */
	signal?: AbortSignal;
	/** Also take `/tree` branch summaries (default false: the deterministic summaries stay). */
	branchSummary?: boolean;
}

export interface OwnerClaim {
	readonly holder: string;
	readonly branchSummary: boolean;
	/** Release the claim; a second call does nothing. */
	withdraw(): void;
}

export type ClaimResult = { ok: true; claim: OwnerClaim } | { ok: false; heldBy: string };

/** The single-holder claim slot. */
export class OwnerClaims {
	private current: (OwnerClaim & { release: () => void }) | undefined;

	get held(): OwnerClaim | undefined {
		return this.current;
	}

	claim(request: OwnerClaimRequest): ClaimResult {
		if (this.current) return { ok: false, heldBy: this.current.holder };
		if (request.signal?.aborted) return { ok: false, heldBy: "(signal already aborted)" };
		const signal = request.signal;
		const onAbort = () => claim.withdraw();
		const claim = {
			holder: request.holder,
			branchSummary: request.branchSummary === true,
			withdraw: () => {
				if (this.current === claim) this.current = undefined;
				signal?.removeEventListener("abort", onAbort);
			},
			release: () => claim.withdraw(),
		};
		signal?.addEventListener("abort", onAbort, { once: true });
		this.current = claim;
		return { ok: true, claim };
	}

	/** Session shutdown: whoever holds the claim loses it. */
	releaseAll(): void {
		this.current?.release();
	}
}
