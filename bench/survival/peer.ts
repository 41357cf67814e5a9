/**
 * The pi-vcc peer arm's availability: the bench asks the npm registry (the
 * only registry reachable here) for the pinned version under every name the
 * package has been published or mirrored as. The project lives on GitHub
 * (monotykamary/pi-vcc), which this machine cannot reach.
 *
 * The arm itself (compact each cut in real Pi 1.6.0 with pi-vcc loaded as
 * the extension) is not built: without the package it could be neither run
 * nor tested here, and an arm nobody ran would be a stub. The report then
 * compares against pi-vcc's published hit rates (issue 31), quoted as such.
 */

import { spawnSync } from "node:child_process";

export const PEER_VERSION = "0.2.2";
/** Names tried on the registry, in order. */
export const PEER_NAMES: readonly string[] = [
	"pi-vcc",
	"@monotykamary/pi-vcc",
	"@sting8k/pi-vcc",
	"pi-vcc-compactor",
	"@earendil-works/pi-vcc",
	"@mariozechner/pi-vcc",
];
/** Seconds one registry look-up may take. */
const LOOKUP_TIMEOUT_MS = 20_000;

export interface PeerLookup {
	name: string;
	answer: string;
}

export interface PeerAvailability {
	available: boolean;
	/** The registry's answer per name. */
	lookups: PeerLookup[];
}

/** Ask the registry for `name@PEER_VERSION`; the first line of its answer. */
function lookup(name: string): PeerLookup {
	const run = spawnSync("npm", ["view", `${name}@${PEER_VERSION}`, "version"], {
		encoding: "utf8",
		timeout: LOOKUP_TIMEOUT_MS,
	});
	const out = `${run.stdout ?? ""}`.trim();
	if (run.status === 0 && out) return { name, answer: `found ${out}` };
	const error = `${run.stderr ?? ""}`.split("\n").find((line) => /\bE\d{3}\b|404|ENOTFOUND|ETIMEDOUT/.test(line));
	return { name, answer: error?.replace(/^npm error\s*/, "").trim() || `exit ${run.status ?? "timeout"}` };
}

export function peerAvailability(): PeerAvailability {
	const lookups = PEER_NAMES.map(lookup);
	return { available: lookups.some((item) => item.answer.startsWith("found")), lookups };
}

/** pi-vcc 0.2.2's hit rates of the summary alone, as issue 31 publishes them (ten cuts of four real sessions). */
export const PEER_PUBLISHED: Readonly<Partial<Record<string, number>>> = {
	firstGoal: 90,
	currentGoal: 30,
	files: 65,
	failureCommand: 38,
	failureLine: 38,
	openPlan: 0,
	decisions: 20,
	identifiers: 23,
	handPicked: 70,
};
