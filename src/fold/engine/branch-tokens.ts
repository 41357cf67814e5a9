/**
 * The window's estimated tokens per branch position, summed over any range
 * in logarithmic time (a Fenwick tree): the ladder sums the tokens of spans
 * as long as the whole folded history (a consolidation's run, the rewrite
 * after the first change), and a per-entry sum would cost the history on
 * every request. An entry's count changes only when Pi's projection of it
 * does, so the engine updates those positions alone.
 */

export class BranchTokens {
	private tree: Float64Array = new Float64Array(1);
	private values: number[] = [];

	/** Counts for a whole branch, by position. */
	reset(counts: readonly number[]): void {
		this.values = [...counts];
		this.tree = new Float64Array(Math.max(1, counts.length) + 1);
		// Linear build: each node adds itself to its parent once.
		for (let i = 1; i <= counts.length; i++) {
			this.tree[i] = (this.tree[i] ?? 0) + (counts[i - 1] ?? 0);
			const parent = i + (i & -i);
			if (parent <= counts.length) this.tree[parent] = (this.tree[parent] ?? 0) + (this.tree[i] ?? 0);
		}
	}

	get length(): number {
		return this.values.length;
	}

	/** Set the count at `position`; a position at the end extends the branch. */
	set(position: number, count: number): void {
		if (position === this.values.length) {
			this.push(count);
			return;
		}
		const delta = count - (this.values[position] ?? 0);
		if (delta === 0) return;
		this.values[position] = count;
		for (let i = position + 1; i < this.tree.length; i += i & -i) this.tree[i] = (this.tree[i] ?? 0) + delta;
	}

	/** Sum of the counts at positions `[start, end)`. */
	sum(start: number, end: number): number {
		return end <= start ? 0 : this.prefix(Math.min(end, this.values.length)) - this.prefix(Math.max(0, start));
	}

	private prefix(end: number): number {
		let total = 0;
		for (let i = end; i > 0; i -= i & -i) total += this.tree[i] ?? 0;
		return total;
	}

	private push(count: number): void {
		this.values.push(count);
		const n = this.values.length;
		if (n >= this.tree.length) {
			const grown = new Float64Array(Math.max(2 * this.tree.length, n + 1));
			grown.set(this.tree);
			this.tree = grown;
			// Nodes past the old end were never written: fill those that cover the old part.
			for (let i = n; i < grown.length; i++) {
				const low = i - (i & -i);
				if (low < n - 1) grown[i] = this.prefixOfRange(low, Math.min(i, n - 1));
			}
		}
		for (let i = n; i < this.tree.length; i += i & -i) this.tree[i] = (this.tree[i] ?? 0) + count;
	}

	private prefixOfRange(start: number, end: number): number {
		let total = 0;
		for (let i = start; i < end; i++) total += this.values[i] ?? 0;
		return total;
	}
}
