import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { loadSessionFile } from "../../src/session/load.ts";
import {
	calibratedTokens,
	calibrationPoints,
	estimateMessagesTokens,
	fitCalibration,
	IDENTITY_CALIBRATION,
} from "../../src/session/tokens.ts";
import { REAL_SESSIONS } from "../fixtures/session.ts";

describe("estimates", () => {
	it("match Pi's estimateTokens message by message", () => {
		const messages = loadSessionFile(REAL_SESSIONS.large).manager.buildSessionProjection().messages;
		const expected = messages.reduce((sum, message) => sum + estimateTokens(message), 0);
		expect(estimateMessagesTokens(messages)).toBe(expected);
		expect(expected).toBeGreaterThan(0);
	});
});

describe("fitCalibration", () => {
	it("recovers overhead and scale from exact linear checkpoints", () => {
		const points = [1000, 5000, 20000].map((estimated) => ({ estimated, actual: 3000 + 1.25 * estimated }));
		const fit = fitCalibration(points);
		expect(fit.method).toBe("least-squares");
		expect(fit.overhead).toBeCloseTo(3000, 6);
		expect(fit.scale).toBeCloseTo(1.25, 9);
		expect(fit.charsPerToken).toBeCloseTo(3.2, 9);
		expect(calibratedTokens(10000, fit)).toBe(15500);
	});

	it("falls back to a ratio for a single point and to identity for none", () => {
		expect(fitCalibration([{ estimated: 1000, actual: 1500 }])).toMatchObject({ method: "ratio", scale: 1.5 });
		expect(fitCalibration([])).toEqual(IDENTITY_CALIBRATION);
		expect(fitCalibration([{ estimated: 0, actual: 10 }])).toEqual(IDENTITY_CALIBRATION);
	});

	it("rejects a fit with negative overhead in favour of the ratio", () => {
		const fit = fitCalibration([
			{ estimated: 1000, actual: 100 },
			{ estimated: 2000, actual: 2100 },
		]);
		expect(fit.method).toBe("ratio");
		expect(fit.overhead).toBe(0);
	});

	it("fits the real log's usage checkpoints to a plausible chars-per-token", () => {
		const messages = loadSessionFile(REAL_SESSIONS.large).manager.buildSessionProjection().messages;
		const points = calibrationPoints(messages);
		expect(points.length).toBeGreaterThan(100);
		const fit = fitCalibration(points);
		expect(fit.points).toBe(points.length);
		expect(fit.charsPerToken).toBeGreaterThan(1);
		expect(fit.charsPerToken).toBeLessThan(16);
	});
});
