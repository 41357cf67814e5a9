import type { Theme } from "@earendil-works/pi-coding-agent";
import type { TUI } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { heading, line, plainReport, title } from "../../../src/fold/pi/report-doc.ts";
import { ReportView } from "../../../src/fold/pi/report-view.ts";

/** Colours are not what is tested here: the theme passes text through. */
const theme = { fg: (_color: string, text: string) => text, bold: (text: string) => text } as unknown as Theme;
const PAGE_DOWN = "\u001b[6~";
const PAGE_UP = "\u001b[5~";
const ESCAPE = "\u001b";

function view(rows: number, count: number) {
	let renders = 0;
	let closed = false;
	const tui = { terminal: { rows }, requestRender: () => renders++ } as unknown as TUI;
	const lines = [
		title("Report"),
		heading("Entries"),
		...Array.from({ length: count }, (_, i) => line(`entry ${i + 1}`, 1)),
	];
	const component = new ReportView(tui, theme, lines, () => {
		closed = true;
	});
	return { component, renders: () => renders, closed: () => closed, lines };
}

describe("the /context view in the TUI", () => {
	it("pages a report taller than the terminal and says where the person is", () => {
		// 16 rows leave a page of 8 report lines (the rest is Pi's editor and footer).
		const { component, renders } = view(16, 30);
		const first = component.render(80).join("\n");
		expect(first).toContain(" Report");
		expect(first).toContain("lines 1–8 of 32");
		expect(first).not.toContain("entry 7\n");
		component.handleInput(PAGE_DOWN);
		const second = component.render(80).join("\n");
		expect(second).toContain("lines 9–16 of 32");
		expect(second).toContain("   entry 7");
		component.handleInput("G");
		expect(component.render(80).join("\n")).toContain("lines 25–32 of 32");
		component.handleInput(PAGE_DOWN);
		expect(component.render(80).join("\n")).toContain("lines 25–32 of 32");
		component.handleInput(PAGE_UP);
		expect(component.render(80).join("\n")).toContain("lines 17–24 of 32");
		expect(renders()).toBe(4);
	});

	it("shows a short report whole, closes on Esc, and prints the same words in plain mode", () => {
		const { component, closed, lines } = view(40, 3);
		const shown = component.render(80).join("\n");
		expect(shown).toContain("Esc close");
		expect(shown).not.toContain("lines 1–");
		for (const text of plainReport(lines).split("\n")) expect(shown).toContain(text);
		component.handleInput(ESCAPE);
		expect(closed()).toBe(true);
	});
});
