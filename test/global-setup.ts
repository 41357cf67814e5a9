/**
 * Before any test: write the bundle Pi loads from this checkout (index.ts,
 * scripts/bundle.ts), so every test that starts Pi runs the sources as they
 * are now, never an earlier build.
 */

import { writeBundle } from "../scripts/bundle.ts";

export default async function setup(): Promise<void> {
	await writeBundle();
}
