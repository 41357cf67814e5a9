/** The names a piece of code declares or imports, as a brief lists them. */

import { describe, expect, it } from "vitest";
import { declaredNames } from "../../src/text/declared-names.ts";

describe("declaredNames", () => {
	it("lists declarations first, then imports, each once, six characters or more", () => {
		const code = [
			'import { useEffect, useState, type ReactNode } from "react";',
			'import { getSupabaseClient as client } from "@/lib/db";',
			"export function OrganizerPortfolio() {",
			"  const [events, setEvents] = useState([]);",
			"  const createdRow = insert();",
			"  let x = 1;",
			"}",
			"export type ThemeColor = string;",
			"class ThemeLoader {}",
			"def load_theme(path):",
			"from os.path import join, dirname",
		].join("\n");
		expect(declaredNames(code)).toEqual([
			"OrganizerPortfolio",
			"createdRow",
			"ThemeColor",
			"ThemeLoader",
			"load_theme",
			"events",
			"setEvents",
			"useEffect",
			"useState",
			"ReactNode",
			"client",
			"dirname",
		]);
	});

	it("reads class methods, with modifiers and a read's line numbers, but not calls, callbacks or control flow", () => {
		const code = [
			"export class ThemeSelector {",
			"\tprivate showThemeSelector(): void {",
			"\tasync loadThemes<T>(dir: string): Promise<T[]> {",
			"\tstatic defaultTheme() {",
			"\tthis.renderPanel(theme);",
			'\tdescribe("selector", () => {',
			"\tswitch (level) {",
			"\tconstructor(settings: Settings) {",
			"}",
		].join("\n");
		expect(declaredNames(code)).toEqual(["ThemeSelector", "showThemeSelector", "loadThemes", "defaultTheme"]);
		expect(declaredNames("    12→\tgetColorMode(): ColorMode {\n")).toEqual(["getColorMode"]);
		expect(declaredNames("Output:\r\n\tupdateDisplay() {\r\n")).toEqual(["updateDisplay"]);
	});

	it("finds nothing in prose", () => {
		expect(declaredNames("The function of this class is to let you type less.")).toEqual([]);
	});
});
