/**
 * Short ASCII strings decoded from bytes through a per-thread table, so that the same bytes give
 * the same string object: the heads of a repository's blocks repeat their column names and most
 * of their dictionary entries block after block (a JSON block's head names 72 columns and ~800
 * entries), and a query thread keeps thousands of heads (query/block-heads.ts). Shared strings
 * keep those heads at a fraction of the memory, and a hit makes no string at all.
 *
 * A direct-mapped table: a slot holds the last string that hashed to it, so it is bounded by
 * construction (SLOTS strings of at most MAX_LENGTH characters) and needs no eviction.
 */
const SLOTS = 1 << 15;
const MAX_LENGTH = 64;
/** Made at first use: 256 KiB of slots that a node which has not read a block head yet does not hold. */
let table: (string | undefined)[] | null = null;

/** `b.toString('utf8', start, end)`, the same string object for the same short ASCII bytes. */
export function utf8Interned(b: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len > MAX_LENGTH) return b.toString('utf8', start, end);
  let h = 0x811c9dc5 ^ len;
  for (let k = start; k < end; k++) {
    const c = b[k]!;
    if (c >= 0x80) return b.toString('utf8', start, end);
    h = Math.imul(h ^ c, 0x01000193);
  }
  const slot = (h ^ (h >>> 15)) & (SLOTS - 1);
  table ??= new Array<string | undefined>(SLOTS);
  const got = table[slot];
  if (got !== undefined && got.length === len) {
    let same = true;
    for (let k = 0; k < len; k++) {
      if (got.charCodeAt(k) !== b[start + k]) {
        same = false;
        break;
      }
    }
    if (same) return got;
  }
  const s = b.toString('latin1', start, end);
  table[slot] = s;
  return s;
}
