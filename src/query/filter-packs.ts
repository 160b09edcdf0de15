/**
 * A query thread's block filters packed per segment, checked many blocks at a time (issue 19, the
 * rare token): the bloom and gram filters of a segment's format 5/6 blocks back to back in one
 * buffer, kept between tasks, and the query's needles hashed once and tested against every block
 * of a unit in one native call (native/block_filters.cc, loaded here, its one importer). The
 * per-block check in JavaScript (scan.ts blockMayMatch over a cached head) cost ~2.3 us a block on
 * the node, ~4x a tight loop's, with the code cold in the timed asks (docs/benchmarks.md, rare19c
 * and rare20). The answer is that check's, block for block (test/unit/query/filter-packs.test.ts);
 * without the module (LOGSVC_NATIVE=off, a failed build) `verdicts` gives null and the scan checks
 * block by block as before.
 *
 * A pack is keyed by segment path (a segment file's blocks never change once written; a rewrite is
 * a new path) and used for a block only when the catalog's lengths for it match the packed ones;
 * a unit with a block the pack lacks (an open segment's new block) makes a new pack with it.
 * Bounded by bytes, the least recently used segment let go first. A damaged head packs no filters:
 * that block is left to the per-block check, which warns as before.
 */
import { loadNative } from '../lib/native-module.js';
import { tokenHashes } from '../segments/bloom.js';
import type { BlockHeads } from './block-heads.js';
import { unpackRefs } from './packed-refs.js';
import type { BlockProbe, BlockRef } from './scan.js';

interface NativeModule {
  /** Per block of `which`: out 0 ruled out, 1 may match, 2 not decided (which < 0, a slot outside data); returns the 1s. */
  survivors(data: Uint8Array, slots: Int32Array, which: Int32Array, probes: Uint32Array, out: Uint8Array): number;
  /** The same for blocks at..at+count of packed refs (packed-refs.ts), found in the pack by position; -1: one is not packed as its ref says. */
  survivorsPacked(data: Uint8Array, slots: Int32Array, pos: Float64Array, lens: Float64Array, refs: Float64Array, at: number, count: number, probes: Uint32Array, out: Uint8Array): number;
}

const loaded = loadNative<NativeModule>('block_filters.node');
const nativeSurvivors: NativeModule['survivors'] | null = loaded.module === null ? null : loaded.module.survivors;
const nativeSurvivorsPacked: NativeModule['survivorsPacked'] | null = loaded.module === null ? null : loaded.module.survivorsPacked;
/** Why blocks are checked one by one in JavaScript (null: they are not). */
export const filterPacksUnavailable: string | null = loaded.why;

/** Per query thread: ~3,300 access-log blocks' filters (~6 M events) or ~1,000 JSON blocks'. */
export const FILTER_PACKS_BYTES = 32 * 1024 * 1024;

/** A verdict: the block's filters rule it out. */
export const RULED_OUT = 0;
/** A verdict: the block may hold a match (its filters let it through). */
export const MAY_MATCH = 1;
/** A verdict: not decided by a pack (a block before format 5, a damaged head): check it block by block. */
export const UNDECIDED = 2;

/**
 * A query's block needs as the native check reads them: [alternatives, then per alternative:
 * tokens, each token's two bloom hashes, gram probes, each probe]. Null without the module.
 */
export function packedProbes(alternatives: readonly BlockProbe[]): Uint32Array | null {
  if (nativeSurvivors === null) return null;
  const out: number[] = [alternatives.length];
  for (const a of alternatives) {
    out.push(a.tokens.length);
    for (const t of a.tokens) out.push(...tokenHashes(t));
    out.push(a.grams.reduce((n, g) => n + g.length, 0));
    for (const g of a.grams) for (const p of g) out.push(p);
  }
  return Uint32Array.from(out);
}

/** One segment's packed filters. */
interface Pack {
  /** The packed blocks' positions, ascending. */
  pos: Float64Array;
  /** Per block: header, bloom, gram and compressed lengths, as the catalog gave them. */
  lens: Float64Array;
  /** Per block: offset in `data` (-1: none, a damaged head), bloom bytes, gram bytes. */
  slots: Int32Array;
  data: Uint8Array;
  bytes: number;
}

/** Index of `at` in ascending `pos`, or -1. */
function indexOf(pos: Float64Array, at: number): number {
  let lo = 0;
  let hi = pos.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const p = pos[mid]!;
    if (p === at) return mid;
    if (p < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * Per block of `blocks`, its slot in `pack` (slot * 2, plus 1 when its gram filter holds field
 * values' grams), -1 for a block not framed; null when a framed block is not packed as the catalog
 * describes it. Units list a segment's blocks in file order, so a walk mostly finds the next slot.
 */
function slotsOf(pack: Pack, blocks: readonly BlockRef[]): Int32Array | null {
  const which = new Int32Array(blocks.length);
  const { pos, lens } = pack;
  let j = 0;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.framed !== true) {
      which[i] = -1;
      continue;
    }
    if (j >= pos.length || pos[j] !== b.pos) j = indexOf(pos, b.pos);
    if (j < 0) return null;
    const k = 4 * j;
    if (lens[k] !== b.headerLength || lens[k + 1] !== b.bloomLength || lens[k + 2] !== b.gramLength || lens[k + 3] !== b.compressedLength) return null;
    which[i] = (j << 1) | (b.fieldGrams === true ? 1 : 0);
    j++;
  }
  return which;
}

interface Packed {
  b: BlockRef;
  filters: Uint8Array | null;
}

export class FilterPacks {
  /** By segment path, least recently used first. */
  private readonly packs = new Map<string, Pack>();
  private held = 0;

  constructor(private readonly maxBytes = FILTER_PACKS_BYTES) {}

  /** Bytes and segments held, for tests and benchmarks. */
  get size(): { bytes: number; segments: number } {
    return { bytes: this.held, segments: this.packs.size };
  }

  clear(): void {
    this.packs.clear();
    this.held = 0;
  }

  /**
   * Per block of `blocks` (a unit of segment `path`; `file()` opens it when a filter must be
   * read), RULED_OUT, MAY_MATCH or UNDECIDED for the query's `probes` (packedProbes). Null: no
   * native module (or no probes), every block is checked one by one.
   */
  verdicts(heads: BlockHeads, file: () => number, path: string, blocks: readonly BlockRef[], probes: Uint32Array | null): Uint8Array | null {
    if (nativeSurvivors === null || probes === null) return null;
    let pack = this.packs.get(path);
    let which = pack === undefined ? null : slotsOf(pack, blocks);
    if (pack === undefined || which === null) {
      pack = this.pack(heads, file, path, blocks, pack);
      which = slotsOf(pack, blocks)!;
    } else {
      // Most recently used: to the end of the order.
      this.packs.delete(path);
      this.packs.set(path, pack);
    }
    const out = new Uint8Array(blocks.length);
    nativeSurvivors(pack.data, pack.slots, which, probes, out);
    return out;
  }

  /**
   * The same for blocks `at` to `at + count` of packed refs (packed-refs.ts), as a first-round task
   * received them: matched against the segment's pack in the native call, so no block is made an
   * object here. A segment without a pack, or with a block the pack does not hold as its ref
   * says, is unpacked and takes `verdicts` (which makes the pack anew).
   */
  verdictsPacked(heads: BlockHeads, file: () => number, path: string, refs: Float64Array, at: number, count: number, probes: Uint32Array | null): Uint8Array | null {
    if (nativeSurvivorsPacked === null || probes === null) return null;
    const pack = this.packs.get(path);
    if (pack !== undefined) {
      const out = new Uint8Array(count);
      if (nativeSurvivorsPacked(pack.data, pack.slots, pack.pos, pack.lens, refs, at, count, probes, out) >= 0) {
        this.packs.delete(path);
        this.packs.set(path, pack);
        return out;
      }
    }
    return this.verdicts(heads, file, path, unpackRefs(refs, at, count), probes);
  }

  /** A new pack of `path`: what `old` held, and `blocks`' framed blocks in place of any it held at their positions. */
  private pack(heads: BlockHeads, file: () => number, path: string, blocks: readonly BlockRef[], old: Pack | undefined): Pack {
    const byPos = new Map<number, Packed>();
    if (old !== undefined) {
      for (let j = 0; j < old.pos.length; j++) {
        const k = 4 * j;
        const b: BlockRef = { pos: old.pos[j]!, headerLength: old.lens[k]!, bloomLength: old.lens[k + 1]!, gramLength: old.lens[k + 2]!, compressedLength: old.lens[k + 3]!, uncompressedLength: 0, eventCount: 0, minTs: 0, maxTs: 0 };
        const at = old.slots[3 * j]!;
        byPos.set(b.pos, { b, filters: at < 0 ? null : old.data.subarray(at, at + b.bloomLength + b.gramLength) });
      }
      this.drop(path);
    }
    for (const b of blocks) {
      if (b.framed !== true) continue;
      const had = byPos.get(b.pos);
      if (had !== undefined && had.b.headerLength === b.headerLength && had.b.bloomLength === b.bloomLength && had.b.gramLength === b.gramLength && had.b.compressedLength === b.compressedLength) continue;
      const head = heads.get(file, path, b, false);
      byPos.set(b.pos, { b, filters: head === null ? null : heads.filtersOf(file, b, head) });
    }
    const list = [...byPos.values()].sort((x, y) => x.b.pos - y.b.pos);
    const n = list.length;
    const pos = new Float64Array(n);
    const lens = new Float64Array(4 * n);
    const slots = new Int32Array(3 * n);
    let bytes = 0;
    for (const e of list) bytes += e.filters?.length ?? 0;
    const data = new Uint8Array(bytes);
    let at = 0;
    list.forEach(({ b, filters }, j) => {
      pos[j] = b.pos;
      lens.set([b.headerLength, b.bloomLength, b.gramLength, b.compressedLength], 4 * j);
      if (filters === null) {
        slots.set([-1, 0, 0], 3 * j);
        return;
      }
      data.set(filters, at);
      slots.set([at, b.bloomLength, b.gramLength], 3 * j);
      at += filters.length;
    });
    const pack: Pack = { pos, lens, slots, data, bytes: bytes + n * 60 };
    this.packs.set(path, pack);
    this.held += pack.bytes;
    // The least recently used let go while over the bound (never the one just made).
    while (this.held > this.maxBytes && this.packs.size > 1) this.drop(this.packs.keys().next().value!);
    return pack;
  }

  private drop(path: string): void {
    const p = this.packs.get(path);
    if (p === undefined) return;
    this.packs.delete(path);
    this.held -= p.bytes;
  }
}
