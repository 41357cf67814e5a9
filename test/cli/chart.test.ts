import { describe, expect, it } from "vitest";
import { type ChartSeries, chartSeries, SPARKLINE_MAX_COLUMNS, sparklineSection } from "../../src/cli/chart.ts";
import { UsageLogBuilder, usage } from "../fixtures/cost.ts";

function series(prompts: number[], marks: Partial<ChartSeries> = {}): ChartSeries {
	return {
		points: prompts.map((prompt, index) => ({
			entryId: `a${index}`,
			promptTokens: prompt,
			cacheReadTokens: prompt / 2,
			uncachedTokens: prompt / 2,
			occupancy: null,
		})),
		window: null,
		model: null,
		unbilled: 0,
		compactions: [],
		commits: [],
		...marks,
	};
}

describe("sparkline", () => {
	it("scales to the window when known, marks compactions and commits under their request", () => {
		const lines = sparklineSection(
			series([100, 200, 400, 800], {
				window: 800,
				compactions: [2],
				commits: [1, 2],
				projected: { promptTokens: [100, 100, 100, 100], commits: [3] },
			}),
		);
		expect(lines).toEqual([
			"Context per request (4 requests; one request per column; full block = the 800-token window):",
			"  recorded  ▁▂▄█",
			"             F*",
			"  pi-fold   ▁▁▁▁",
			"              CF",
			"            C compaction, F pi-fold commit, * both",
		]);
	});

	it("groups long sessions into at most 64 columns, tallest request shown, scaled to the peak without a window", () => {
		const lines = sparklineSection(series(Array.from({ length: 1000 }, (_, i) => i + 1)));
		expect(lines[0]).toBe(
			"Context per request (1,000 requests; 16 requests per column, tallest shown; full block = the peak, 1,000 tokens (window unknown)):",
		);
		expect(lines[1]?.length).toBe(12 + Math.ceil(1000 / 16));
		expect(Math.ceil(1000 / 16)).toBeLessThanOrEqual(SPARKLINE_MAX_COLUMNS);
		expect(lines[1]?.endsWith("█")).toBe(true);
		expect(sparklineSection(series([]))).toEqual(["Context per request: no chart (no request recorded prompt usage)"]);
	});

	it("reads requests from the log, leaving out the ones that recorded no usage", () => {
		const log = new UsageLogBuilder();
		log.user("go");
		log.assistant("one", usage({ input: 1_000, output: 10 }));
		log.user("again");
		log.assistant("failed", usage({}));
		log.user("more");
		log.assistant("two", usage({ input: 100, cacheRead: 1_000, cacheWrite: 50, output: 10 }));
		const read = chartSeries(log.entries);
		expect(read.unbilled).toBe(1);
		expect(read.points.map((point) => [point.promptTokens, point.cacheReadTokens, point.uncachedTokens])).toEqual([
			[1_000, 0, 1_000],
			[1_150, 1_000, 150],
		]);
	});
});
