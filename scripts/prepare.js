// npm's `prepare` step: npm runs it on `npm install` and `npm ci` in a
// checkout, on `npm pack`, and in the clone Pi makes for `pi install git:…`
// (Pi runs `npm install --omit=dev --legacy-peer-deps --no-audit --no-fund`
// there). It writes the bundle Pi loads (scripts/bundle.ts) when the bundler
// is installed. An install without development dependencies has no bundler:
// there it says so and succeeds, and Pi loads src/ directly, the same code
// module by module (src/package/load.ts). Plain JavaScript, so whichever
// Node npm runs it with can read it; bundle.ts is imported only where the
// development install has put Node 22 first on PATH.

try {
	await import("rolldown");
} catch (error) {
	if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
	process.stderr.write(
		"pi-fold: no bundler in this install (development dependencies left out), so no bundle: Pi loads src/ directly, the same code, ~0.2 s slower a start. `npm install` then `npm run bundle` writes it.\n",
	);
	process.exit(0);
}
const { writeBundle } = await import("./bundle.ts");
// Said on stderr: `npm pack --json` runs this and its stdout must stay JSON.
process.stderr.write(`bundle: wrote ${await writeBundle()}\n`);
