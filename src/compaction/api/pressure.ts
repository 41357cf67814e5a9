/**
 * `compact.pressure()`: how full the window is, labelled by the configured
 * `pressureBands`. A label only; it never triggers compaction.
 */

import type { PressureBands } from "../settings/settings.ts";

export type PressureBand = "ok" | "warn" | "urgent" | "unknown";

export interface PressureReading {
	band: PressureBand;
	/** Context tokens (Pi's usage-based estimate), when known. */
	tokens?: number;
	contextWindow?: number;
	/** tokens / contextWindow, when both are known. */
	ratio?: number;
	bands: PressureBands;
}

/** Band of a reading: `urgent` at or above `bands.urgent`, `warn` at or above `bands.warn`, else `ok`. */
export function pressureBand(
	tokens: number | null | undefined,
	contextWindow: number | undefined,
	bands: PressureBands,
): PressureReading {
	if (tokens === null || tokens === undefined || contextWindow === undefined || !(contextWindow > 0)) {
		return { band: "unknown", ...(contextWindow !== undefined ? { contextWindow } : {}), bands };
	}
	const ratio = tokens / contextWindow;
	const band = ratio >= bands.urgent ? "urgent" : ratio >= bands.warn ? "warn" : "ok";
	return { band, tokens, contextWindow, ratio, bands };
}
