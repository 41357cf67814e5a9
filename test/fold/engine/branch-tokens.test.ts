/** Range sums of per-position counts, as positions change and the branch grows, equal the plain sums. */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BranchTokens } from "../../../src/fold/engine/branch-tokens.ts";

describe("BranchTokens", () => {
	it("sums any range like a loop over the counts, through resets, changes and growth", () => {
		const op = fc.oneof(
			fc.record({ kind: fc.constant("push" as const), count: fc.nat(500) }),
			fc.record({ kind: fc.constant("set" as const), at: fc.nat(), count: fc.nat(500) }),
			fc.record({ kind: fc.constant("reset" as const), counts: fc.array(fc.nat(500), { maxLength: 40 }) }),
		);
		fc.assert(
			fc.property(fc.array(fc.nat(500), { maxLength: 40 }), fc.array(op, { maxLength: 80 }), (initial, ops) => {
				const tokens = new BranchTokens();
				let plain = [...initial];
				tokens.reset(initial);
				for (const step of ops) {
					if (step.kind === "push") {
						tokens.set(plain.length, step.count);
						plain.push(step.count);
					} else if (step.kind === "set" && plain.length > 0) {
						const at = step.at % plain.length;
						tokens.set(at, step.count);
						plain[at] = step.count;
					} else if (step.kind === "reset") {
						tokens.reset(step.counts);
						plain = [...step.counts];
					}
					for (let start = 0; start <= plain.length; start++)
						for (let end = start; end <= plain.length + 1; end++)
							expect(tokens.sum(start, end)).toBe(plain.slice(start, end).reduce((a, b) => a + b, 0));
				}
			}),
			{ numRuns: 200 },
		);
	});
});
