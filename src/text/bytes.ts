/**
 * Sizes as people (and models) read them: 512 B, 45.1 KB, 2.3 MB, in
 * powers of 1,024. One rule for every text that states a size.
 */

const KIB = 1024;
const MIB = KIB * 1024;

/** Bytes as a person reads them: 512 B, 45.1 KB, 2.3 MB. */
export function readableBytes(bytes: number): string {
	if (bytes < KIB) return `${bytes} B`;
	if (bytes < MIB) return `${(bytes / KIB).toFixed(1)} KB`;
	return `${(bytes / MIB).toFixed(1)} MB`;
}
