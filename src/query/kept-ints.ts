/**
 * Integer columns of a block kept decoded by a query thread between tasks (issue 19): a numeric
 * range over a delta-encoded column (`responsesize > 100000`) must read every delta to know the
 * values, ~60 % of the scan's CPU over the access log (profile, docs/benchmarks.md, 2026-11-29,
 * range19), where comparing the values of a typed array is a few times cheaper. The first range
 * over a block walks the deltas as before and notes the column; the second decodes it
 * (decodeNumbers) and keeps it when every value is a 32-bit integer (a query asked once pays no
 * decode: the first over a block decoding made a cold query ~30 % dearer); later ones compare the
 * kept values. The kept frames (kept-frames.ts) still hold the column's msgpack for the other
 * readers. A range whose count alone is asked (`responsesize > 100000 | count()`) takes a copy of
 * the kept values in ascending order, made at its first ask (a block's ~2,000 values sorted in
 * ~75 µs): two binary searches count the block, where the loop over its values was half of that
 * question's CPU at 3 M events (docs/benchmarks.md, 2026-11-29, range19b).
 *
 * Keyed like the kept frames: segment path, block position and its frames' stored length (a block
 * never changes once written), then the field's name; bounded by the arrays' bytes, the least
 * recently used blocks let go first (block-cache.ts).
 */
import { BlockCache, type CacheEntry } from './block-cache.js';
import { NumberTally } from './number-tally.js';
import { decodeNumbers, textIntValues, type NumberColumn } from '../segments/columns.js';

/**
 * Per query thread: 4 bytes a value, 8 with its ordered copy: the columns of ~4,000 blocks of
 * 2,000 rows, or ~2,000 blocks' with their copies (3 M access-log events: 1,580 blocks, 25 MB).
 * Held only while the thread lives (it ends after 30 s idle).
 */
export const KEPT_INTS_BYTES = 32 * 1024 * 1024;

/** What an entry and a column cost besides their values, for the bound. */
const ENTRY_COST = 200;
const COLUMN_COST = 100;

/** One block's kept columns: a column's values (null: not all 32-bit integers, never kept). */
export interface KeptIntColumns {
  /** The column's values once kept; null before that (its first use), or when they are not all 32-bit integers. */
  values(name: string, col: NumberColumn, n: number): Int32Array | null;
  /** A column kept (by values), without reading it; undefined if none is. */
  held(name: string): Int32Array | undefined;
  /**
   * A text column's values (`{e: "u"}`, `run()` reads it) once kept, NO_INT where a row has none:
   * kept at its second use when every row holding a value holds an integer's canonical text
   * (columns.ts textIntValues) of 32 bits other than NO_INT; null before that, and for other
   * columns. Apart from `held`: a range over text is not one over integers.
   */
  textInts(name: string, run: () => { b: Uint8Array; l: Uint8Array } | null, n: number): Int32Array | null;
  /**
   * The same kept text column's distinct values with how many rows hold each, in order of first
   * occurrence, as pairs (value, count); made at its first ask and kept with it. Null when the
   * column is not kept (textInts): no entry is made or noted.
   */
  textIntCounts(name: string): Int32Array | null;
}

interface IntsEntry extends CacheEntry {
  /** A column's values; null: not all 32-bit integers; false: asked for once. */
  cols: Map<string, Int32Array | null | false>;
  /** Kept columns' values in ascending order, made when first asked for. */
  sorted: Map<string, Int32Array> | null;
  /** Text columns' values as integers, as `cols` (textInts). */
  texts: Map<string, Int32Array | null | false> | null;
  /** Kept text columns' distinct values and their counts (textIntCounts), made when first asked for. */
  counts: Map<string, Int32Array> | null;
  stored: number;
}

export class KeptInts {
  private readonly cache: BlockCache<IntsEntry>;

  constructor(maxBytes = KEPT_INTS_BYTES) {
    this.cache = new BlockCache<IntsEntry>(maxBytes);
  }

  /** Bytes and blocks held, for tests. */
  get size(): { bytes: number; blocks: number } {
    return { bytes: this.cache.held, blocks: this.cache.entries };
  }

  clear(): void {
    this.cache.clear();
  }

  /**
   * The kept columns of the block at `pos` of segment `path` (`stored`: its frames' stored length);
   * nothing is held until a column is asked for. `ordered`: a range counted alone, whose ordered
   * copy is made when the values are first kept (ready for the next such range, sorted()).
   */
  block(path: string, pos: number, stored: number, ordered = false): KeptIntColumns {
    return {
      values: (name, col, n) => this.values(path, pos, stored, name, col, n, ordered),
      held: (name) => this.held(path, pos, stored, name),
      textInts: (name, run, n) => this.textInts(path, pos, stored, name, run, n),
      textIntCounts: (name) => this.textIntCounts(path, pos, stored, name),
    };
  }

  /**
   * KeptIntColumns.textIntCounts. Count distinct and top over every row of a block add its
   * distinct values once each with their counts (about half the rows of `user.id` in the JSON
   * set), where adding every row's value was 40 % of that scan (docs/benchmarks.md, json21).
   */
  private textIntCounts(path: string, pos: number, stored: number, name: string): Int32Array | null {
    const e = this.cache.get(path, pos);
    if (e === undefined || e.stored !== stored) return null;
    const had = e.counts?.get(name);
    if (had !== undefined) return had;
    const values = e.texts?.get(name);
    if (values === undefined || values === null || values === false) return null;
    const made = countPairs(values);
    if (this.cache.holds(e)) {
      (e.counts ??= new Map()).set(name, made);
      this.cache.grew(e, made.byteLength);
    }
    return made;
  }

  /**
   * KeptIntColumns.textInts. Count distinct and top of a text column of integers (`user.id` of the
   * JSON set) read every row's digits, two thirds of that scan (docs/benchmarks.md, 2026-11-29
   * num19b); kept, the values are added to the tally as an integer column's are (json21).
   */
  private textInts(path: string, pos: number, stored: number, name: string, run: () => { b: Uint8Array; l: Uint8Array } | null, n: number): Int32Array | null {
    let e = this.cache.get(path, pos);
    if (e === undefined || e.stored !== stored) {
      e = { cols: new Map(), sorted: null, texts: null, counts: null, bytes: ENTRY_COST, path, pos, stored, used: 0 };
      this.cache.add(e);
    }
    const texts = (e.texts ??= new Map());
    const had = texts.get(name);
    if (had === undefined) {
      // The first use only notes the column (a query asked once pays no decode).
      if (this.cache.holds(e)) {
        texts.set(name, false);
        this.cache.grew(e, COLUMN_COST);
      }
      return null;
    }
    if (had !== false) return had !== null && had.length === n ? had : null;
    const col = run();
    const values = col === null ? null : textIntValues(col, n);
    const made = values === null ? null : int32s(values, true);
    if (this.cache.holds(e)) {
      texts.set(name, made);
      this.cache.grew(e, made === null ? 0 : made.byteLength);
    }
    return made;
  }

  /** The column `name` of the block at `pos` of segment `path` when kept decoded (no entry made); undefined if not. */
  held(path: string, pos: number, stored: number, name: string): Int32Array | undefined {
    const e = this.cache.get(path, pos);
    const had = e === undefined || e.stored !== stored ? undefined : e.cols.get(name);
    return had === null || had === false ? undefined : had;
  }

  /** The same column's values in ascending order (sorted when first asked for, then kept with it); undefined when it is not kept. */
  sorted(path: string, pos: number, stored: number, name: string): Int32Array | undefined {
    const e = this.cache.get(path, pos);
    if (e === undefined || e.stored !== stored) return undefined;
    const had = e.sorted?.get(name);
    if (had !== undefined) return had;
    const values = e.cols.get(name);
    if (values === undefined || values === null || values === false) return undefined;
    return this.order(e, name, values);
  }

  private order(e: IntsEntry, name: string, values: Int32Array): Int32Array {
    const made = values.slice().sort();
    (e.sorted ??= new Map()).set(name, made);
    this.cache.grew(e, made.byteLength);
    return made;
  }

  private values(path: string, pos: number, stored: number, name: string, col: NumberColumn, n: number, ordered: boolean): Int32Array | null {
    let e = this.cache.get(path, pos);
    if (e === undefined || e.stored !== stored) {
      e = { cols: new Map(), sorted: null, texts: null, counts: null, bytes: ENTRY_COST, path, pos, stored, used: 0 };
      this.cache.add(e);
    }
    const had = e.cols.get(name);
    if (had === undefined) {
      if (this.cache.holds(e)) {
        e.cols.set(name, false);
        this.cache.grew(e, COLUMN_COST);
      }
      return null;
    }
    if (had !== false) return had !== null && had.length === n ? had : null;
    const made = int32s(decodeNumbers(col, n));
    if (this.cache.holds(e)) {
      e.cols.set(name, made);
      this.cache.grew(e, made === null ? 0 : made.byteLength);
      if (ordered && made !== null && this.cache.holds(e)) this.order(e, name, made);
    }
    return made;
  }
}

/** A kept text column's row without a value (textInts). */
export const NO_INT = -(2 ** 31);

/** The values as 32-bit integers; null when one is not. `absent`: NaN (a row without one) becomes NO_INT, which no value may be. */
function int32s(values: ArrayLike<number>, absent = false): Int32Array | null {
  const out = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (absent && x !== x) out[i] = NO_INT;
    else if ((x | 0) !== x || (absent && x === NO_INT)) return null;
    else out[i] = x;
  }
  return out;
}

/** countPairs' tally, reused. */
const pairTally = new NumberTally();

/** A kept text column's distinct values (NO_INT left out) and how many rows hold each, in order of first occurrence, as pairs. */
function countPairs(values: Int32Array): Int32Array {
  const t = pairTally;
  t.reset(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (x !== NO_INT) t.add(x);
  }
  const out = new Int32Array(2 * t.size);
  for (let k = 0; k < t.size; k++) {
    out[2 * k] = t.value(k);
    out[2 * k + 1] = t.count(k);
  }
  return out;
}
