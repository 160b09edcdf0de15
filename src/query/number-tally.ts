/**
 * Tallies of numbers for the column path (columnar.ts tallyField): the distinct values of an
 * integer or IPv4 column over a block's selected rows, with how many rows hold each, in order of
 * first occurrence; and the text of each value, made once per thread.
 *
 * The tally is an open-addressing table over typed arrays reused block after block (a generation
 * number per slot instead of clearing it), and in front of it a direct index of a window of
 * DENSE values from a base set by the first value held: values near it (ids, sizes, codes) are
 * found by their offset, no hash and no probe; the others go to the table. The texts are kept in
 * a bounded map per kind, so that a value met again in a later block or task gives the same
 * string object, whose hash V8 computed the first time: the aggregate's map lookups by that key
 * then hash nothing. Profiles of
 * `top(client)` over 1 M access-log events had three quarters of the scan in a Map of numbers per
 * block, the strings made per block and their hashing (docs/benchmarks.md, 2026-11-28).
 */
import { MAX_INT_TEXT, textIntAt } from '../segments/columns.js';

/**
 * Texts kept per kind; past it new values are not kept (the values met first stay: in skewed data
 * the frequent ones), so a column of mostly distinct values costs one lookup more per value.
 */
const MAX_TEXTS = 1 << 16;

/**
 * Values in the direct window (64 KiB of index). Profile of `count(user.id, distinct=true)` over
 * 1 M JSON events (500 ids within 3,500 of each other): the hash adds were a quarter of the scan.
 */
const DENSE = 1 << 14;

/** Both 32-bit halves of a safe integer, mixed (values up to 2^53, negative ones included). */
function hashOf(x: number): number {
  return Math.imul((x >>> 0) ^ Math.imul((x / 4294967296) | 0, 0x27d4eb2d), 0x9e3779b1) >>> 0;
}

export class NumberTally {
  private slots = new Int32Array(0);
  private gens = new Uint32Array(0);
  private gen = 0;
  private mask = 0;
  private vals = new Float64Array(0);
  private cnts = new Float64Array(0);
  /** Index + 1 of value `base + i` at `dense[i]`, 0 where not held; made at the first reset, reserve or add. */
  private dense: Int32Array | null = null;
  /** The window's first value; NaN until the first value held sets it (no value is then in it). */
  private base = Number.NaN;
  /** Distinct values so far. */
  size = 0;

  /** Empties the window: the held values' entries, or all of it when they are many. */
  private clearDense(): void {
    const dense = this.dense;
    if (dense === null || this.size === 0) return;
    if (this.size * 8 >= DENSE) dense.fill(0);
    else {
      for (let k = 0; k < this.size; k++) {
        const d = this.vals[k]! - this.base;
        if (d >= 0 && d < DENSE) dense[d] = 0;
      }
    }
  }

  /** Starts a tally of at most `rows` values. */
  reset(rows: number): void {
    this.clearDense();
    this.base = Number.NaN;
    this.dense ??= new Int32Array(DENSE);
    let cap = 16;
    while (cap < rows * 2) cap *= 2;
    if (this.slots.length < cap) {
      this.slots = new Int32Array(cap);
      this.gens = new Uint32Array(cap);
      this.gen = 0;
    }
    if (this.vals.length < rows) {
      this.vals = new Float64Array(Math.max(rows, 2 * this.vals.length));
      this.cnts = new Float64Array(this.vals.length);
    }
    this.mask = cap - 1;
    this.size = 0;
    this.gen++;
    if (this.gen === 0xffffffff) {
      this.gens.fill(0);
      this.gen = 1;
    }
  }

  /**
   * Room for `more` distinct values beyond those held, the table grown (and its values placed
   * again) when it would be over half full: a tally kept across blocks (HeldTally in columnar.ts)
   * calls this before each block's rows instead of reset.
   */
  reserve(more: number): void {
    this.dense ??= new Int32Array(DENSE);
    if (this.vals.length < this.size + more) {
      const vals = new Float64Array(Math.max(this.size + more, 2 * this.vals.length));
      const cnts = new Float64Array(vals.length);
      vals.set(this.vals.subarray(0, this.size));
      cnts.set(this.cnts.subarray(0, this.size));
      this.vals = vals;
      this.cnts = cnts;
    }
    const need = (this.size + more) * 2;
    if (need <= this.mask + 1) return;
    let cap = 16;
    while (cap < need) cap *= 2;
    if (this.slots.length < cap) {
      this.slots = new Int32Array(cap);
      this.gens = new Uint32Array(cap);
      this.gen = 0;
    }
    this.mask = cap - 1;
    this.place();
  }

  /** Places the held values outside the window in the hash table again, on a new generation. */
  private place(): void {
    this.gen++;
    if (this.gen === 0xffffffff) {
      this.gens.fill(0);
      this.gen = 1;
    }
    for (let k = 0; k < this.size; k++) {
      const x = this.vals[k]!;
      const d = x - this.base;
      if (d >= 0 && d < DENSE) continue;
      let h = hashOf(x);
      for (;;) {
        h &= this.mask;
        if (this.gens[h] !== this.gen) break;
        h++;
      }
      this.gens[h] = this.gen;
      this.slots[h] = k;
    }
  }

  /** Bytes of the tally's arrays (what a query is charged for one kept across blocks). */
  get bytes(): number {
    return this.slots.byteLength + this.gens.byteLength + this.vals.byteLength + this.cnts.byteLength + (this.dense?.byteLength ?? 0);
  }

  /** Counts `x` (a safe integer) `c` times more. */
  add(x: number, c = 1): void {
    const d = x - this.base;
    const i = d | 0;
    if (i === d && i >>> 0 < DENSE) {
      const dense = this.dense!;
      const k = dense[i]! - 1;
      if (k >= 0) this.cnts[k]! += c;
      else {
        const n = this.size++;
        dense[i] = n + 1;
        this.vals[n] = x;
        this.cnts[n] = c;
      }
      return;
    }
    if (this.size === 0 && Number.isSafeInteger(x)) {
      // The first value held places the window: a quarter of it below the value.
      this.dense ??= new Int32Array(DENSE);
      this.base = x - DENSE / 4;
      this.add(x, c);
      return;
    }
    this.addHashed(x, c);
  }

  /**
   * add(x, c), a value held in the window placed at `base` (a loop's copy of this.base) counted
   * with no more checks; the base after (the first value held places it).
   */
  private addNear(x: number, c: number, base: number): number {
    const d = x - base;
    const i = d | 0;
    if (i === d && i >>> 0 < DENSE) {
      const k = this.dense![i]! - 1;
      if (k >= 0) {
        this.cnts[k]! += c;
        return base;
      }
    }
    this.add(x, c);
    return this.base;
  }

  /**
   * Counts pairs `pairs[2k]` (a value) held `pairs[2k + 1]` times (a block's distinct values with
   * their counts, in order of first occurrence: kept-ints.ts textIntCounts), values in the window
   * counted in locals, the others through add: the same tally as adding each row's value.
   */
  addPairs(pairs: Int32Array): void {
    this.dense ??= new Int32Array(DENSE);
    let base = this.base;
    for (let p = 0; p < pairs.length; p += 2) {
      const x = pairs[p]!;
      base = this.addNear(x, pairs[p + 1]!, base);
    }
  }

  /**
   * Counts the values `ints[sel[j]]` of `j` < `count`, leaving out `skip` (a kept text column's
   * rows without a value), as add would one by one, values in the window counted in locals.
   */
  addInts(ints: Int32Array, sel: Int32Array, count: number, skip: number): void {
    this.dense ??= new Int32Array(DENSE);
    let base = this.base;
    for (let j = 0; j < count; j++) {
      const x = ints[sel[j]!]!;
      if (x === skip) continue;
      base = this.addNear(x, 1, base);
    }
  }

  /**
   * Counts `x` (a safe integer) of values spread wide, IPv4 addresses: by the hash alone while no
   * value has placed the window (add), which is then left unplaced. A window there cost a third
   * more time (`count(client, distinct=true)` over 300 k access-log events, 5.6 -> 7.5 ms).
   */
  addSpread(x: number): void {
    if (this.base === this.base) this.add(x);
    else this.addHashed(x);
  }

  /** Counts `x`, a value outside the window, `c` times more in the hash table. */
  private addHashed(x: number, c = 1): void {
    let h = hashOf(x);
    const mask = this.mask;
    const gens = this.gens;
    const slots = this.slots;
    const gen = this.gen;
    for (;;) {
      h &= mask;
      if (gens[h] !== gen) {
        gens[h] = gen;
        const k = this.size++;
        slots[h] = k;
        this.vals[k] = x;
        this.cnts[k] = c;
        return;
      }
      const k = slots[h]!;
      if (this.vals[k] === x) {
        this.cnts[k]! += c;
        return;
      }
      h++;
    }
  }

  /**
   * Counts the values of rows `sel[0..count)` (ascending) of a text column (`{e: "u"}`: UTF-8 run
   * `b`, a length varint per row in `l`) when each is an integer's canonical text (columns.ts
   * textIntAt), read from the bytes straight into the tally: no array of numbers between. False,
   * the tally left as it was, when one is not, or a row before the last selected one holds a text
   * that is not (the rows are found by their lengths, in UTF-16 units): the caller then takes the
   * column's texts. Room for `count` more values must be made first.
   */
  addTextInts(b: Uint8Array, l: Uint8Array, sel: Int32Array, count: number): boolean {
    const done = this.textInts(b, l, sel, count, 1);
    if (done === count) return true;
    // Back out what the rows before the failed one added: their values are valid, so walking them
    // again finds each; the values new in them go back to no count and are dropped.
    const size = this.size;
    this.textInts(b, l, sel, done, -1);
    let kept = size;
    while (kept > 0 && this.cnts[kept - 1] === 0) kept--;
    const dense = this.dense!;
    for (let k = kept; k < size; k++) {
      const d = this.vals[k]! - this.base;
      if (d >= 0 && d < DENSE) dense[d] = 0;
    }
    this.size = kept;
    if (kept === 0) this.base = Number.NaN;
    this.place();
    return false;
  }

  /**
   * Adds (`step` 1) the selected rows' integers, or takes them back (-1: every one was added
   * before, by the same rows); how many selected rows were done before one whose value is not an
   * integer's text.
   */
  private textInts(b: Uint8Array, l: Uint8Array, sel: Int32Array, count: number, step: 1 | -1): number {
    // A value met before in the window is counted here, in locals; the rest through add().
    this.dense ??= new Int32Array(DENSE);
    const cnts = this.cnts;
    let base = this.base;
    let lp = 0;
    let bp = 0;
    let j = 0;
    let want = count > 0 ? sel[0]! : -1;
    // Every row selected (ascending, distinct: the last is count - 1): no row to match.
    const all = count > 0 && sel[count - 1] === count - 1;
    // Every row up to the last selected one is read, selected or not: a length counts UTF-16 units,
    // which are the bytes only where the text is digits (as textIntValues, columns.ts).
    for (let row = 0; j < count; row++) {
      if (lp >= l.length) return j;
      const v = l[lp++]!;
      let x = Number.NaN;
      if (v !== 0) {
        if (v === 1 || v > MAX_INT_TEXT + 1) return j;
        const end = bp + v - 1;
        if (end > b.length) return j;
        x = textIntAt(b, bp, end);
        if (x !== x) return j;
        bp = end;
      }
      if (all) j++;
      else {
        if (row !== want) continue;
        want = ++j < count ? sel[j]! : -1;
      }
      if (v === 0) continue;
      if (step === -1) {
        cnts[this.indexOf(x)]!--;
        continue;
      }
      base = this.addNear(x, 1, base);
    }
    return count;
  }


  /** Where held value `x` is. */
  private indexOf(x: number): number {
    const d = x - this.base;
    if (d >= 0 && d < DENSE) return this.dense![d]! - 1;
    let h = hashOf(x);
    for (;;) {
      h &= this.mask;
      const k = this.slots[h]!;
      if (this.gens[h] === this.gen && this.vals[k] === x) return k;
      h++;
    }
  }

  value(k: number): number {
    return this.vals[k]!;
  }

  count(k: number): number {
    return this.cnts[k]!;
  }
}

/**
 * Texts of numbers by value, in an open-addressing table (a Map would box each value past 2^30 to
 * look it up). Holds at most MAX_TEXTS; past it new values are not kept.
 */
class TextMemo {
  private keys = new Float64Array(0);
  private texts: (string | undefined)[] = [];
  private size = 0;

  constructor(private readonly make: (x: number) => string) {}

  text(x: number): string {
    let h = this.slot(x);
    const got = this.texts[h];
    if (got !== undefined) return got;
    const s = this.make(x);
    if (this.size < MAX_TEXTS) {
      // Grown (from nothing: a thread that never tallies numbers holds none) to stay at most half full.
      if (2 * (this.size + 1) > this.keys.length) {
        this.grow();
        h = this.slot(x);
      }
      this.keys[h] = x;
      this.texts[h] = s;
      this.size++;
    }
    return s;
  }

  /** Where `x` is, or the free slot where it would go. */
  private slot(x: number): number {
    const mask = this.keys.length - 1;
    if (mask < 0) return 0;
    let h = hashOf(x);
    for (;;) {
      h &= mask;
      if (this.texts[h] === undefined || this.keys[h] === x) return h;
      h++;
    }
  }

  private grow(): void {
    const { keys, texts } = this;
    this.keys = new Float64Array(Math.max(1024, 2 * keys.length));
    this.texts = new Array<string | undefined>(this.keys.length).fill(undefined);
    for (let h = 0; h < keys.length; h++) {
      const t = texts[h];
      if (t !== undefined) {
        const to = this.slot(keys[h]!);
        this.keys[to] = keys[h]!;
        this.texts[to] = t;
      }
    }
  }
}

const intTexts = new TextMemo(String);
const ipv4Texts = new TextMemo(ipv4Dotted);

/** The text of integer `x` as an integer column decodes it (String(x)), the same string each time. */
export function intText(x: number): string {
  return intTexts.text(x);
}

/** The dotted text of IPv4 address `x` (a u32, most significant byte first), the same string each time. */
export function ipv4Text(x: number): string {
  return ipv4Texts.text(x);
}

/** The dotted text of IPv4 address `x`, made anew. */
export function ipv4Dotted(x: number): string {
  return `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
}
