/**
 * A terminal screen (text with SGR colour escapes, as `tmux capture-pane -e`
 * prints it) as one self-contained HTML page: a monospace grid in a dark
 * terminal's colours, so headless Chromium can screenshot what the person saw.
 * Handles the SGR codes Pi's themes use (bold, dim, italic, underline, 16,
 * 256 and 24-bit colours); other escapes are dropped.
 */

const BASE16 = [
	"#1e1e1e",
	"#cd3131",
	"#0dbc79",
	"#e5e510",
	"#2472c8",
	"#bc3fbc",
	"#11a8cd",
	"#e5e5e5",
	"#666666",
	"#f14c4c",
	"#23d18b",
	"#f5f543",
	"#3b8eea",
	"#d670d6",
	"#29b8db",
	"#ffffff",
];
const BACKGROUND = "#1e1e1e";
const FOREGROUND = "#d4d4d4";

function color256(n: number): string {
	if (n < 16) return BASE16[n] ?? FOREGROUND;
	if (n >= 232) {
		const level = 8 + (n - 232) * 10;
		return `rgb(${level},${level},${level})`;
	}
	const cube = n - 16;
	const step = (value: number) => (value === 0 ? 0 : 55 + value * 40);
	return `rgb(${step(Math.floor(cube / 36))},${step(Math.floor(cube / 6) % 6)},${step(cube % 6)})`;
}

interface Style {
	fg?: string;
	bg?: string;
	bold?: boolean;
	dim?: boolean;
	italic?: boolean;
	underline?: boolean;
}

function apply(style: Style, codes: number[]): Style {
	const next = { ...style };
	for (let i = 0; i < codes.length; i++) {
		const code = codes[i] ?? 0;
		if (code === 0) for (const key of Object.keys(next)) delete next[key as keyof Style];
		else if (code === 1) next.bold = true;
		else if (code === 2) next.dim = true;
		else if (code === 3) next.italic = true;
		else if (code === 4) next.underline = true;
		else if (code === 22) next.bold = next.dim = false;
		else if (code === 23) next.italic = false;
		else if (code === 24) next.underline = false;
		else if (code === 39) delete next.fg;
		else if (code === 49) delete next.bg;
		else if (code >= 30 && code <= 37) next.fg = BASE16[code - 30];
		else if (code >= 90 && code <= 97) next.fg = BASE16[code - 90 + 8];
		else if (code >= 40 && code <= 47) next.bg = BASE16[code - 40];
		else if (code >= 100 && code <= 107) next.bg = BASE16[code - 100 + 8];
		else if (code === 38 || code === 48) {
			const target = code === 38 ? "fg" : "bg";
			if (codes[i + 1] === 5) {
				next[target] = color256(codes[i + 2] ?? 0);
				i += 2;
			} else if (codes[i + 1] === 2) {
				next[target] = `rgb(${codes[i + 2] ?? 0},${codes[i + 3] ?? 0},${codes[i + 4] ?? 0})`;
				i += 4;
			}
		}
	}
	return next;
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function css(style: Style): string {
	const parts: string[] = [];
	if (style.fg) parts.push(`color:${style.fg}`);
	if (style.bg) parts.push(`background:${style.bg}`);
	if (style.bold) parts.push("font-weight:bold");
	if (style.dim) parts.push("opacity:0.6");
	if (style.italic) parts.push("font-style:italic");
	if (style.underline) parts.push("text-decoration:underline");
	return parts.join(";");
}

/** The screen as an HTML page `columns` characters wide. */
export function ansiToHtml(screen: string, columns: number): string {
	let style: Style = {};
	const body: string[] = [];
	// CSI sequences: SGR (…m) is kept as style, every other one is dropped; OSC (hyperlinks) is dropped.
	// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what this parses.
	const pattern = /\u001b\[([0-9;:]*)([A-Za-z])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;
	let last = 0;
	const text = (chunk: string) => {
		if (chunk === "") return;
		const rule = css(style);
		body.push(rule ? `<span style="${rule}">${escapeHtml(chunk)}</span>` : escapeHtml(chunk));
	};
	for (const match of screen.matchAll(pattern)) {
		text(screen.slice(last, match.index));
		last = (match.index ?? 0) + match[0].length;
		if (match[2] === "m") style = apply(style, (match[1] || "0").split(/[;:]/).map(Number));
	}
	text(screen.slice(last));
	return `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:${BACKGROUND}}
pre{margin:0;padding:12px;color:${FOREGROUND};font:14px/1.35 "DejaVu Sans Mono","Liberation Mono",monospace;width:${columns}ch;white-space:pre}
</style><pre>${body.join("")}</pre>`;
}
