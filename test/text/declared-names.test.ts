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

	it("finds nothing in prose", () => {
		expect(declaredNames("The function of this class is to let you type less.")).toEqual([]);
	});
});
