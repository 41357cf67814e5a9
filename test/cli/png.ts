/**
 * A minimal PNG reader for screenshot assertions: 8-bit RGB or RGBA,
 * non-interlaced (what headless Chromium writes), decoded with node:zlib.
 * Anything else throws, so a changed screenshot format fails loudly.
 */

import { inflateSync } from "node:zlib";

export interface Pixels {
	width: number;
	height: number;
	/** RGBA, row-major. */
	rgba: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const COLOR_TYPE_CHANNELS: Readonly<Record<number, number>> = { 2: 3, 6: 4 };

function paeth(a: number, b: number, c: number): number {
	const p = a + b - c;
	const pa = Math.abs(p - a);
	const pb = Math.abs(p - b);
	const pc = Math.abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(file: Buffer): Pixels {
	if (!file.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG");
	let offset = 8;
	let width = 0;
	let height = 0;
	let channels = 0;
	const data: Buffer[] = [];
	while (offset < file.length) {
		const length = file.readUInt32BE(offset);
		const type = file.toString("latin1", offset + 4, offset + 8);
		const body = file.subarray(offset + 8, offset + 8 + length);
		if (type === "IHDR") {
			width = body.readUInt32BE(0);
			height = body.readUInt32BE(4);
			const depth = body[8];
			channels = COLOR_TYPE_CHANNELS[body[9] ?? -1] ?? 0;
			if (depth !== 8 || channels === 0 || body[12] !== 0) throw new Error("unsupported PNG format");
		} else if (type === "IDAT") data.push(body);
		else if (type === "IEND") break;
		offset += 12 + length;
	}
	const raw = inflateSync(Buffer.concat(data));
	const stride = width * channels;
	const out = new Uint8Array(width * height * 4);
	let previous = new Uint8Array(stride);
	for (let y = 0; y < height; y++) {
		const filter = raw[y * (stride + 1)];
		const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
		const row = new Uint8Array(stride);
		for (let i = 0; i < stride; i++) {
			const left = i >= channels ? (row[i - channels] ?? 0) : 0;
			const up = previous[i] ?? 0;
			const upLeft = i >= channels ? (previous[i - channels] ?? 0) : 0;
			const value = line[i] ?? 0;
			const predicted =
				filter === 0
					? 0
					: filter === 1
						? left
						: filter === 2
							? up
							: filter === 3
								? (left + up) >> 1
								: filter === 4
									? paeth(left, up, upLeft)
									: Number.NaN;
			if (Number.isNaN(predicted)) throw new Error(`bad PNG filter ${filter}`);
			row[i] = (value + predicted) & 0xff;
		}
		for (let x = 0; x < width; x++) {
			for (let c = 0; c < 4; c++) {
				out[(y * width + x) * 4 + c] = c < channels ? (row[x * channels + c] ?? 0) : 255;
			}
		}
		previous = row;
	}
	return { width, height, rgba: out };
}

/** Pixels in a rectangle whose colour is within `tolerance` (per channel) of `rgb`. */
export function countColor(
	pixels: Pixels,
	rgb: readonly [number, number, number],
	tolerance: number,
	box = { x: 0, y: 0, width: pixels.width, height: pixels.height },
): number {
	let count = 0;
	for (let y = box.y; y < Math.min(pixels.height, box.y + box.height); y++) {
		for (let x = box.x; x < Math.min(pixels.width, box.x + box.width); x++) {
			const at = (y * pixels.width + x) * 4;
			const near = [0, 1, 2].every((c) => Math.abs((pixels.rgba[at + c] ?? 0) - (rgb[c] ?? 0)) <= tolerance);
			if (near) count++;
		}
	}
	return count;
}
