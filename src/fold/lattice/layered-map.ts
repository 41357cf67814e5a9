/**
 * A read-only map made of a base map and a few entries set over it, in the
 * order a copied `Map` with those `set` calls would have: a key the base
 * holds keeps its place with the new value, a new key comes after. Growing a
 * large map by a few entries then costs those entries, not a copy; a stack
 * deeper than `MAX_LAYERS` is copied flat once, so reads stay cheap.
 */

/** Layers a read may pass through before the map is copied flat. */
const MAX_LAYERS = 8;

export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
	private readonly base: ReadonlyMap<K, V>;
	private readonly top: ReadonlyMap<K, V>;
	private readonly added: number;
	readonly layers: number;

	private constructor(base: ReadonlyMap<K, V>, top: ReadonlyMap<K, V>) {
		this.base = base;
		this.top = top;
		let added = 0;
		for (const key of top.keys()) if (!base.has(key)) added++;
		this.added = added;
		this.layers = (base instanceof LayeredMap ? base.layers : 1) + 1;
	}

	/** `base` with `entries` set over it. */
	static over<K, V>(base: ReadonlyMap<K, V>, entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
		const layered = new LayeredMap(base, new Map(entries));
		return layered.layers > MAX_LAYERS ? new Map(layered) : layered;
	}

	get size(): number {
		return this.base.size + this.added;
	}

	get(key: K): V | undefined {
		return this.top.has(key) ? this.top.get(key) : this.base.get(key);
	}

	has(key: K): boolean {
		return this.top.has(key) || this.base.has(key);
	}

	forEach(each: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
		for (const [key, value] of this) each(value, key, this);
	}

	*entries(): MapIterator<[K, V]> {
		for (const [key, value] of this.base) yield [key, this.top.has(key) ? (this.top.get(key) as V) : value];
		for (const [key, value] of this.top) if (!this.base.has(key)) yield [key, value];
	}

	*keys(): MapIterator<K> {
		for (const [key] of this.entries()) yield key;
	}

	*values(): MapIterator<V> {
		for (const [, value] of this.entries()) yield value;
	}

	[Symbol.iterator](): MapIterator<[K, V]> {
		return this.entries();
	}
}
