/**
 * What pi-fold makes public, as the package's `pi-fold/api` export: the
 * registration entry (`registerPiFold`, `PiFoldOptions`) and the compaction
 * API another extension drives — `compact.request`, `status`, `pressure`,
 * `cancel`, `carry` and the owner claim — with the types a host needs.
 * Anything not exported here is internal and may change without notice.
 *
 * From another extension:
 * ```ts
 * import { compactionApiFrom } from "pi-fold/api";
 * const compact = compactionApiFrom(pi.events); // undefined when pi-fold is not loaded
 * compact?.request(ctx, { preserve: ["commit abc123 is the release"] });
 * ```
 * The look-up goes over `pi.events` (channel `COMPACTION_API_CHANNEL`), so an
 * extension that cannot import this module can emit `{ reply(api) }` there.
 */

export { MAX_CARRY_BYTES, MAX_CARRY_ITEMS } from "./compaction/api/carry.ts";
export type { ClaimResult, OwnerClaim, OwnerClaimRequest } from "./compaction/api/claim.ts";
export {
	COMPACTION_API_CHANNEL,
	COMPACTION_READY_CHANNEL,
	compactionApiFrom,
} from "./compaction/api/controller.ts";
export type { CompactionOwner } from "./compaction/api/owner.ts";
export type { PressureBand, PressureReading } from "./compaction/api/pressure.ts";
export type { AutoTrigger, TriggerBackoff } from "./compaction/api/trigger.ts";
export { BACKOFF_GROWTH_RATIO, BACKOFF_MIN_GROWTH_TOKENS } from "./compaction/api/trigger.ts";
export type {
	ApiContext,
	CarryResult,
	CompactionApi,
	CompactionStatus,
	CompactionWaiting,
	CompactRequest,
	CompactRequestResult,
	LastAutoCompaction,
	LastCompactionResult,
} from "./compaction/api/types.ts";
export { COMPACTION_API_VERSION } from "./compaction/api/types.ts";
export { COMPACT_REQUEST_PREFIX, PI_VCC_SENTINEL } from "./compaction/records/wire.ts";
export type { PressureBands } from "./compaction/settings/settings.ts";
export type { CompactionOptions } from "./compaction/settings/settings-source.ts";
export type { PiFoldOptions } from "./fold/options.ts";
export { registerPiFold } from "./index.ts";
