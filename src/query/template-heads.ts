/**
 * What a text search needs of a block's templated raw column before its rows, kept by a query
 * thread between tasks (issue 19): each gap column's entries, as numbers into the thread's table of
 * gap texts, and which field column each layout places at which position (every pair once). With
 * these a search decides, for a needle no gap entry holds and no cut can carry, that the raw
 * column adds nothing, and the column's frame is not read, checked or decompressed: its codes,
 * layout numbers and layouts are read only when a gap holds the needle, a row is walked across
 * cuts, or a regex needs a row's raw string. On the JSON set that frame is ~51 KB a block, two
 * thirds of what a common-word search decompressed (docs/benchmarks.md, "json21").
 *
 * A JSON set's gap entries repeat from block to block (1 M events: 36,079 gap columns in 1,000
 * blocks, 871 distinct entries), so each text is held once per thread and a block's head is about
 * 2 KB. Made the first time a text search reads a block's template (that search reads it whole, as
 * before). Keyed like the seen bytes (seen-bytes.ts): segment path, block position and its frames'
 * stored length (a block never changes once written). Bounded by bytes, least recently used first.
 */
import { BlockCache, type CacheEntry } from './block-cache.js';
import type { Needle } from './text-match.js';
import { foldUnit } from './casefold.js';

/** Per query thread: ~2,000 JSON blocks' heads (2 KB each). */
export const TEMPLATE_HEADS_BYTES = 4 * 1024 * 1024;

/** Gap texts a thread's table holds at most (entries are numbered in 16 bits), and their units. */
const MAX_TEXTS = 65_535;
const MAX_TEXT_UNITS = 1024 * 1024;

/** What an entry costs besides its arrays (key, object, typed arrays' headers), for the bound. */
const ENTRY_COST = 400;

/** A block's template as a text search first sees it. */
export interface TemplateHead {
  /** Every gap's entries, back to back, as numbers in the thread's gap texts (GapTexts). */
  readonly entries: Uint16Array;
  /** Gap g's entries are entries[starts[g], starts[g + 1]). */
  readonly starts: Uint32Array;
  /** (position, field column) of every layout, each pair once, flat: k0, j0, k1, j1, ... */
  readonly pairs: Uint16Array;
}

/**
 * The gap texts of a thread, each held once, and per text what the current needle makes of it
 * (holds it, the state after it from 0, may go on with a partial match): worked out once per text
 * and needle, not once per block.
 */
export class GapTexts {
  readonly texts: string[] = [];
  private readonly index = new Map<string, number>();
  private units = 0;
  private nd: Needle | null = null;
  /** Per text: 0 not known yet, 1 holds the needle, 2 does not. */
  private hit = new Int8Array(0);
  /** Per text without the needle: the state after it from 0; -1 not known yet. */
  private tails = new Int32Array(0);
  /** Per text: 0 not known yet, 1 may go on with a partial match begun before it, 2 not. */
  private goes = new Int8Array(0);

  /** The number of `s`, added when new; -1 when the table is full. */
  numberOf(s: string): number {
    const got = this.index.get(s);
    if (got !== undefined) return got;
    if (this.texts.length >= MAX_TEXTS || this.units + s.length > MAX_TEXT_UNITS) return -1;
    const k = this.texts.length;
    this.texts.push(s);
    this.index.set(s, k);
    this.units += s.length;
    return k;
  }

  private forNeedle(nd: Needle): void {
    if (this.nd === nd && this.hit.length === this.texts.length) return;
    if (this.nd !== nd) {
      this.hit = new Int8Array(this.texts.length);
      this.tails = new Int32Array(this.texts.length).fill(-1);
      this.goes = new Int8Array(this.texts.length);
    } else {
      // Texts added since: their answers are not known yet.
      const hit = new Int8Array(this.texts.length);
      hit.set(this.hit);
      const tails = new Int32Array(this.texts.length).fill(-1);
      tails.set(this.tails);
      const goes = new Int8Array(this.texts.length);
      goes.set(this.goes);
      [this.hit, this.tails, this.goes] = [hit, tails, goes];
    }
    this.nd = nd;
  }

  /** Text t holds the needle. */
  holds(nd: Needle, t: number): boolean {
    this.forNeedle(nd);
    if (this.hit[t] === 0) this.hit[t] = nd.inside(this.texts[t]!) ? 1 : 2;
    return this.hit[t] === 1;
  }

  /** The state after text t from state 0 (a text that does not hold the needle). */
  tail(nd: Needle, t: number): number {
    this.forNeedle(nd);
    let q = this.tails[t]!;
    if (q < 0) this.tails[t] = q = nd.tail(this.texts[t]!);
    return q;
  }

  /** Text t may go on with a partial match begun before it (empty: it passes the state on). */
  goesOn(nd: Needle, t: number): boolean {
    this.forNeedle(nd);
    if (this.goes[t] === 0) {
      const v = this.texts[t]!;
      this.goes[t] = v.length === 0 || nd.continues(nd.folded ? foldUnit(v.charCodeAt(0)) : v.charCodeAt(0)) ? 1 : 2;
    }
    return this.goes[t] === 1;
  }
}

/** One block's head, or where to put it once made. */
export interface TemplateHeadSlot {
  readonly head: TemplateHead | undefined;
  readonly texts: GapTexts;
  put(head: TemplateHead): void;
}

interface BlockEntry extends CacheEntry {
  head: TemplateHead;
  stored: number;
}

export class TemplateHeads {
  private readonly cache: BlockCache<BlockEntry>;
  readonly texts = new GapTexts();

  constructor(maxBytes = TEMPLATE_HEADS_BYTES) {
    this.cache = new BlockCache<BlockEntry>(maxBytes);
  }

  /** Bytes and blocks held, for tests and benchmarks. */
  get size(): { bytes: number; blocks: number } {
    return { bytes: this.cache.held, blocks: this.cache.entries };
  }

  clear(): void {
    this.cache.clear();
  }

  /** The head of the block at `pos` of segment `path` (`stored`: its frames' stored length). */
  block(path: string, pos: number, stored: number): TemplateHeadSlot {
    const cache = this.cache;
    return {
      get head() {
        const e = cache.get(path, pos);
        return e !== undefined && e.stored === stored ? e.head : undefined;
      },
      texts: this.texts,
      put: (h) => {
        const bytes = ENTRY_COST + h.entries.byteLength + h.starts.byteLength + h.pairs.byteLength;
        this.cache.add({ head: h, bytes, path, pos, stored, used: 0 });
      },
    };
  }
}

/**
 * The head of a template whose gaps' entries are `gaps` (null: a gap that is not a dictionary) and
 * whose layouts are `layouts`; null when the thread's table of texts is full or a gap is not a
 * dictionary (the block is then read whole, as without heads).
 */
export function templateHead(texts: GapTexts, gaps: readonly ((readonly string[]) | null)[], layouts: readonly (readonly number[])[], fields: number): TemplateHead | null {
  let count = 0;
  for (const g of gaps) {
    if (g === null) return null;
    count += g.length;
  }
  const entries = new Uint16Array(count);
  const starts = new Uint32Array(gaps.length + 1);
  let at = 0;
  for (let g = 0; g < gaps.length; g++) {
    starts[g] = at;
    for (const s of gaps[g]!) {
      const t = texts.numberOf(s);
      if (t < 0) return null;
      entries[at++] = t;
    }
  }
  starts[gaps.length] = at;
  const pairs = layoutPairs(layouts, gaps.length, fields);
  return pairs === null ? null : { entries, starts, pairs };
}

/**
 * Every (position, field column) pair of `layouts`, once each, flat; null when a layout is not one
 * of `gaps` gaps and `fields` fields (as many fields as gaps or more, or a field number out of
 * range: the caller reports the damage).
 */
export function layoutPairs(layouts: readonly (readonly number[])[], gaps: number, fields: number): Uint16Array | null {
  if (gaps > 0xffff || fields > 0xffff) return null;
  const seen = new Uint8Array(gaps * fields);
  const out: number[] = [];
  for (const layout of layouts) {
    if (layout.length >= gaps) return null;
    for (let k = 0; k < layout.length; k++) {
      const j = layout[k]!;
      if (!(j >= 0 && j < fields)) return null;
      const at = k * fields + j;
      if (seen[at] === 1) continue;
      seen[at] = 1;
      out.push(k, j);
    }
  }
  return Uint16Array.from(out);
}
