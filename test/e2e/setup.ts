/** Fails any e2e test during which a harness reported a tripwire problem (see test/harness/tripwire.ts). */

import { afterEach, expect } from "vitest";
import { takeProblems } from "../harness/tripwire.ts";

afterEach(() => {
	expect(takeProblems(), "tripwire problems reported during this test").toEqual([]);
});
