/**
 * Which byte values each UTF-8 text column (`u`) and each dictionary with its entries in its frame
 * (`k`, more than 64 entries) of a block holds, kept by a query thread between tasks (issue 19): a
 * text search for a needle with a byte the column lacks (in neither case, when
 * folded) cannot find it in any of the column's values, so the column's frame is not checked,
 * decompressed or searched (text-columns.ts UnreadColumn) unless a match across a template cut or
 * a regex needs a row's value. On the JSON set a third of a block's decompressed bytes are such
 * columns for `failed` (hex ids, timestamps, numbers as text; docs/benchmarks.md, "Regex and common
 * word scans", 2026-11-29).
 *
 * A column's set is made the first time a text search reads it (32 bytes per column; native
 * byteSet, else a loop), so the first search over a block reads everything as before. Keyed like
 * the kept frames (kept-frames.ts): segment path, block position and its frames' stored length
 * (a block never changes once written), then the column's name.
 */
import { BlockCache, type CacheEntry } from './block-cache.js';
import { nativeByteSet } from './native-text.js';
import type { Needle } from './text-match.js';

/** Per query thread: 32 bytes a column, so ~100,000 text columns. */
export const SEEN_BYTES_BOUND = 4 * 1024 * 1024;

/** What an entry and a column cost besides their sets, for the bound. */
const ENTRY_COST = 200;
const COLUMN_COST = 100;

/** One block's sets. */
export interface SeenBytes {
  get(name: string): Uint8Array | undefined;
  put(name: string, set: Uint8Array): void;
}

interface BlockEntry extends CacheEntry {
  sets: Map<string, Uint8Array>;
  stored: number;
}

export class SeenBytesCache {
  private readonly cache: BlockCache<BlockEntry>;

  constructor(maxBytes = SEEN_BYTES_BOUND) {
    this.cache = new BlockCache<BlockEntry>(maxBytes);
  }

  /** Bytes and blocks held, for tests. */
  get size(): { bytes: number; blocks: number } {
    return { bytes: this.cache.held, blocks: this.cache.entries };
  }

  clear(): void {
    this.cache.clear();
  }

  /** The sets of the block at `pos` of segment `path` (`stored`: its frames' stored length). */
  block(path: string, pos: number, stored: number): SeenBytes {
    let entry = this.cache.get(path, pos);
    if (entry === undefined || entry.stored !== stored) {
      entry = { sets: new Map(), bytes: ENTRY_COST, path, pos, stored, used: 0 };
      this.cache.add(entry);
    }
    const e = entry;
    return {
      get: (name) => e.sets.get(name),
      put: (name, set) => {
        if (e.sets.has(name) || !this.cache.holds(e)) return;
        e.sets.set(name, set);
        this.cache.grew(e, set.length + COLUMN_COST);
      },
    };
  }
}

/** The byte values in `b`, as 32 bytes of bits (bit c & 7 of byte c >> 3). */
export function byteSetOf(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  if (nativeByteSet !== null) {
    nativeByteSet(b, out);
    return out;
  }
  const seen = new Uint8Array(256);
  for (let i = 0; i < b.length; i++) seen[b[i]!] = 1;
  for (let c = 0; c < 256; c++) if (seen[c] === 1) out[c >> 3]! |= 1 << (c & 7);
  return out;
}

function has(set: Uint8Array, c: number): boolean {
  return (set[c >> 3]! & (1 << (c & 7))) !== 0;
}

/**
 * Whether UTF-8 text holding only the bytes of `set` may hold `nd` (false: it cannot), and whether
 * it may hold any unit of it at all (a value without one ends in no partial match of it). Only a
 * needle searched as bytes (Needle.bytes) is judged; any other may be anywhere.
 */
export function needleIn(set: Uint8Array, nd: Needle): { whole: boolean; some: boolean } {
  const bytes = nd.bytes;
  if (bytes === null) return { whole: true, some: true };
  let whole = true;
  let some = false;
  for (let k = 0; k < bytes.length; k++) {
    const c = bytes[k]!;
    // Folded: lower-case ASCII, found as itself or its upper case; `k` also as the Kelvin sign
    // (E2 84 AA), the one other unit that folds into ASCII.
    const found = has(set, c) || (nd.folded && c >= 97 && c <= 122 && has(set, c - 32)) || (nd.folded && c === 107 && has(set, 0xe2));
    if (found) some = true;
    else whole = false;
  }
  return { whole, some };
}
