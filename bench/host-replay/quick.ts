/**
 * A quick, host-free estimate of the ladder on the host replay's sessions:
 * `pi-fold report`'s projection (the engine played headless, Pi's compaction
 * replayed for the baseline) per session and window. Seconds instead of the
 * real-host run's half hour; for iterating on the ladder, not for results.
 * `node bench/host-replay/quick.ts [tuned|held-out|all]`.
 */

import { projectSavings } from "../../src/cost/projected-savings.ts";
import { PI_COMPACTION, SESSIONS } from "./sessions.ts";

const which = process.argv[2] ?? "tuned";
const windows = [200_000, 128_000];
for (const session of SESSIONS) {
	if (which !== "all" && session.set !== which) continue;
	const branch = session.branch();
	for (const window of windows) {
		const started = Date.now();
		const s = await projectSavings(branch, "/", { contextWindow: window, ...PI_COMPACTION });
		const ratio = s.projected.cost / s.native.cost;
		console.log(
			`${session.name.padEnd(28)} ${String(window / 1000).padStart(3)}k  pi-fold/native ${ratio.toFixed(2)}  ` +
				`native $${s.native.cost.toFixed(2)} (${s.native.compactions} compactions)  pi-fold $${s.projected.cost.toFixed(2)} ` +
				`commits ${s.commits} folds ${s.folds} peak ${s.projected.peakPromptTokens}  ${Date.now() - started} ms`,
		);
	}
}
