/**
 * Every identifier the deterministic compactor shares with other programs,
 * spelled exactly as the compaction spec writes them. They come from
 * pi-fabric, whose sessions and extensions this package interoperates with,
 * so they keep that project's names; everywhere else the code names the
 * compactor by what it is. Changing any value here breaks old sessions or
 * cooperating extensions.
 */

/** `details.compactor` of every compaction this compactor writes. */
export const DETAILS_COMPACTOR_TAG = "fabric";
/** `details.kind` of a deterministic `/tree` branch-summary envelope (defined with the envelope's reader). */
export { BRANCH_SUMMARY_KIND } from "../../session/records/branch-details.ts";
/** Exact custom-instruction sentinel that hands a compaction to pi-vcc. */
export const PI_VCC_SENTINEL = "__pi_vcc__";
/** Reserved namespace of the typed compaction request protocol. */
export const COMPACT_REQUEST_NAMESPACE = "__pi_fabric_compact_request_";
/** Exact prefix of a typed v1 request; the strict JSON object follows immediately. */
export const COMPACT_REQUEST_PREFIX = `${COMPACT_REQUEST_NAMESPACE}v1__:`;
/** Marker this compactor sets on a `session_before_compact` event it claimed. */
export const COMPACTOR_CLAIM_MARKER = "_fabricCompaction";
/** Marker an earlier pi-vcc handler sets when it supplied the result. */
export const PI_VCC_OVERRIDE_MARKER = "_piVccOverriding";
/** Engine value of `compaction.engine` that selects this compactor (settings files are wire too). */
export const DETERMINISTIC_ENGINE = "fabric";
/** Owner value `compact.status()` reports for a compaction this compactor wrote. */
export const DETERMINISTIC_OWNER = "fabric";
