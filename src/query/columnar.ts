/**
 * The column path of a scan: a block's events answered from its metadata or its columns instead of
 * one `ColumnEvent` per event through the pipeline (issue 19).
 *
 * - Metadata: a block wholly inside the query range answers `count()` from its event count, and a
 *   time histogram of counts (timechart/bucket) when it lies inside one bucket, without reading it.
 * - Filters: the leading pure filter stages (their syntax, MapStage.filters) are evaluated per block
 *   into a selection vector of row indexes. A comparison on a dictionary-encoded field asks its test
 *   once per entry, `<`/`>` on an integer column compares numbers, free text tests each distinct
 *   value of a dictionary column once.
 * - Aggregates: `count()`, `groupBy(f)`/`top(f)` of counts and `timechart()` of counts take the
 *   selection (Aggregator.columns) by tallying codes or bucket indexes, not string keys per event.
 *
 * What is not covered (function calls as filters, filters on created fields, other aggregates, a
 * stage that changes events) runs through the per-event path from that stage on, so every query
 * still gets its answer; test/unit/query/paths-property.test.ts checks both paths agree.
 */
import type { Filter } from './ast.js';
import type { BlockView } from './block-view.js';
import { compareNumber, compareTest, regexFor, searchedField, textTest } from './filter.js';
import type { Aggregator, ColumnAggregator, ColumnRows, MapStage, SummaryRows } from './runtime.js';
import type { ColumnSummary } from '../segments/summaries.js';
import { hasWildcard } from './wildcard.js';
import { Needle } from './text-match.js';
import { textRowTest } from './text-scan.js';
import { regexAlphabet, regexLiteral, regexLocal } from './regex-literal.js';
import { intText, ipv4Dotted, ipv4Text, NumberTally } from './number-tally.js';
import { NO_INT } from './kept-ints.js';
import { chargeKept, releaseKept } from './memory.js';
import { selectDeltaRange, type NumberColumn as EncodedNumbers } from '../segments/columns.js';
import { fieldIndex } from '../segments/frames.js';

/** This thread's tally of numbers (reused block after block). */
const numberTally = new NumberTally();

/** One filter specialised to one block: row index -> kept. */
type RowTest = (i: number) => boolean;
type BlockFilter = (view: BlockView) => RowTest;

function never(): never {
  throw new Error('a compiled query failed to compile again');
}
const hooks = { fail: never };

/** A field the column path reads as a stored column (built-ins and tags go through view.get). */
export function plainField(name: string): boolean {
  const c = name.charCodeAt(0);
  return c !== 64 /* @ */ && c !== 35 /* # */;
}

/** `test` over every value of a stored field, each distinct dictionary entry tested once. */
function fieldTest(view: BlockView, name: string, test: (s: string | undefined) => boolean): RowTest {
  const dict = view.dict(name);
  if (dict !== null) {
    const m = new Uint8Array(dict.d.length);
    for (let k = 0; k < dict.d.length; k++) m[k] = test(dict.d[k]) ? 1 : 0;
    const absent = test(undefined);
    const { codes, absent: none } = dict;
    return (i) => {
      const c = codes[i]!;
      return c === none ? absent : m[c] === 1;
    };
  }
  const col = view.field(name);
  if (col === null) {
    const r = test(undefined);
    return () => r;
  }
  return (i) => test(col[i] ?? undefined);
}

/**
 * Free text or a bare regex by the plain test of every value: @rawstring (built), then every
 * stored field the block has (filter.ts searchedValues). For what text-scan.ts does not search
 * (wildcards, a regex without a required literal).
 */
function anyValueTest(view: BlockView, test: (s: string) => boolean): RowTest {
  const raw = view.raw();
  const parts: RowTest[] = [];
  for (const name of view.fieldNames()) {
    if (!searchedField(name)) continue;
    parts.push(fieldTest(view, name, (s) => s !== undefined && test(s)));
  }
  return (i) => {
    const r = raw[i];
    if (r !== undefined && test(r)) return true;
    for (let k = 0; k < parts.length; k++) if (parts[k]!(i)) return true;
    return false;
  };
}

function numericOp(op: string, n: number): ((x: number) => boolean) | null {
  switch (op) {
    case '<':
      return (x) => x < n;
    case '<=':
      return (x) => x <= n;
    case '>':
      return (x) => x > n;
    case '>=':
      return (x) => x >= n;
    default:
      return null;
  }
}

/** A filter as a per-block row test, or null when the column path does not evaluate it. */
export function blockFilter(f: Filter): BlockFilter | null {
  switch (f.k) {
    case 'all':
      return () => () => true;
    case 'and':
    case 'or': {
      const a = blockFilter(f.left);
      const b = blockFilter(f.right);
      if (a === null || b === null) return null;
      return f.k === 'and'
        ? (v) => {
            const x = a(v);
            const y = b(v);
            return (i) => x(i) && y(i);
          }
        : (v) => {
            const x = a(v);
            const y = b(v);
            return (i) => x(i) || y(i);
          };
    }
    case 'not': {
      const a = blockFilter(f.expr);
      if (a === null) return null;
      return (v) => {
        const x = a(v);
        return (i) => !x(i);
      };
    }
    case 'compare': {
      const test = compareTest(f, hooks);
      const name = f.field;
      if (!plainField(name)) return (v) => (i) => test(v.get(name, i));
      const numeric = f.op === '<' || f.op === '<=' || f.op === '>' || f.op === '>=';
      const cmp = numeric ? numericOp(f.op, compareNumber(f, hooks)) : null;
      if (cmp !== null) {
        // Numbers compared as numbers on an integer column (canonical integers: parseNumber(String(x)) is x).
        return (v) => {
          const ints = v.ints(name);
          if (ints === null) return fieldTest(v, name, test);
          return (i) => cmp(ints[i]!);
        };
      }
      return (v) => fieldTest(v, name, test);
    }
    case 'text': {
      const test = textTest(f.value);
      if (hasWildcard(f.value) || f.value.length === 0) return (v) => anyValueTest(v, test);
      const search = { nd: new Needle(f.value, true), re: null };
      return (v) => textRowTest(v, search) ?? anyValueTest(v, test);
    }
    case 'regex': {
      const re = regexFor(f.source, f.flags, f.span, hooks).re;
      const lit = regexLiteral(f.source, f.flags);
      if (lit === null) return (v) => anyValueTest(v, (s) => re.test(s));
      // The required literal first; the regex only where it is (and not at all for a plain literal).
      const nd = new Needle(lit.text, lit.folded);
      const inside = nd.inside;
      const test = lit.exact ? inside : (s: string): boolean => inside(s) && re.test(s);
      const search = { nd, re: lit.exact ? null : re, alphabet: lit.exact ? null : regexAlphabet(f.source, f.flags), local: !lit.exact && regexLocal(re) };
      return (v) => textRowTest(v, search) ?? anyValueTest(v, test);
    }
    default:
      return null;
  }
}

/** How a task scans blocks: filters on columns, then per-event stages or a column aggregate. */
export interface ColumnPlan {
  /** The leading filter stages, as per-block row tests (all of them must hold). */
  filters: BlockFilter[];
  /** Per filter, the same filter as one loop over its column where it has one (blockNarrow). */
  narrows: (BlockNarrow | null)[];
  /** The filters as column summaries decide them (summaryRows); null when one of them cannot be. */
  summaryFilters: SummaryFilter[] | null;
  /** The stages after them, run per event (empty: the aggregate gets the rows). */
  rest: MapStage[];
  /** The aggregate's column path when `rest` is empty. */
  agg: ColumnAggregator<unknown> | null;
  /** A filter reads every column of a block (free text, a bare regex): read its frames at once. */
  wide: boolean;
}

/** True for a filter that reads every column of a block it searches. */
function readsEveryColumn(f: Filter): boolean {
  switch (f.k) {
    case 'text':
    case 'regex':
      return true;
    case 'and':
    case 'or':
      return readsEveryColumn(f.left) || readsEveryColumn(f.right);
    case 'not':
      return readsEveryColumn(f.expr);
    default:
      return false;
  }
}

export function columnPlan(maps: readonly MapStage[], agg: Aggregator): ColumnPlan {
  const filters: BlockFilter[] = [];
  const narrows: (BlockNarrow | null)[] = [];
  let wide = false;
  let at = 0;
  for (; at < maps.length; at++) {
    const fs = maps[at]!.filters;
    if (fs === undefined) break;
    const compiled = fs.map(blockFilter);
    if (compiled.some((c) => c === null)) break;
    filters.push(...(compiled as BlockFilter[]));
    narrows.push(...fs.map(blockNarrow));
    wide ||= fs.some(readsEveryColumn);
  }
  const rest = maps.slice(at);
  const conds = maps.slice(0, at).flatMap((m) => m.filters!);
  const decided = conds.map(summaryFilter);
  const summaryFilters = decided.every((f) => f !== null) ? (decided as SummaryFilter[]) : null;
  return { filters, narrows, summaryFilters, rest, agg: rest.length === 0 ? (agg.columns ?? null) : null, wide };
}

/** True when `plan` answers a block wholly inside the range from its metadata alone. */
export function metadataAnswers(plan: ColumnPlan): boolean {
  return plan.filters.length === 0 && plan.agg !== null && (plan.agg.addCount !== undefined || plan.agg.addSpan !== undefined);
}

/** Adds a block's events from its metadata; false when the metadata does not decide (then read the block). */
export function addFromMetadata(plan: ColumnPlan, state: unknown, minTs: number, maxTs: number, n: number): boolean {
  const c = plan.agg!;
  if (c.addCount !== undefined) {
    c.addCount(state, n);
    return true;
  }
  return c.addSpan!(state, minTs, maxTs, n);
}

/** 0, 1, 2, ...: the selection of every row of a block (never written to; grown as blocks need). */
let identity = new Int32Array(0);
/** The selection being narrowed: reused block after block (a block's selection lives until its rows are handed on). */
let scratch = new Int32Array(0);

function identityOf(n: number): Int32Array {
  if (identity.length < n) {
    identity = new Int32Array(Math.max(n, 2 * identity.length));
    for (let i = 0; i < identity.length; i++) identity[i] = i;
  }
  return identity;
}

/**
 * The rows of `view` in [start, end] (all when `whole`) that pass the plan's filters. The
 * selection is valid until the next call (it is this thread's scratch array, or the shared
 * identity when every row is selected): its rows are handed on before the next block is read.
 */
export function selectRows(plan: ColumnPlan, view: BlockView, whole: boolean, start: number, end: number): { sel: Int32Array; inRange: number; count: number } {
  const n = view.n;
  if (scratch.length < n) scratch = new Int32Array(Math.max(n, 2 * scratch.length));
  const out = scratch;
  // null: rows 0 .. count-1, all of them (no array filled for a block wholly in range).
  let sel: Int32Array | null = null;
  let count = n;
  if (!whole) {
    const ts = view.ts();
    count = 0;
    for (let i = 0; i < n; i++) {
      const t = ts[i]!;
      if (t >= start && t <= end) out[count++] = i;
    }
    sel = out;
  }
  const inRange = count;
  for (let f = 0; f < plan.filters.length && count > 0; f++) {
    const narrow = plan.narrows[f]?.(view) ?? null;
    if (narrow !== null) {
      count = narrow(sel, count, out);
      sel = out;
      continue;
    }
    const test = plan.filters[f]!(view);
    let k = 0;
    if (sel === null) {
      for (let i = 0; i < count; i++) if (test(i)) out[k++] = i;
    } else {
      for (let j = 0; j < count; j++) {
        const i = sel[j]!;
        if (test(i)) out[k++] = i;
      }
    }
    sel = out;
    count = k;
  }
  return { sel: sel ?? identityOf(n), inRange, count };
}

/**
 * Narrows a selection to the rows that pass, writing them to `out` (which may be `sel`); `sel`
 * null: rows 0 .. count-1. Returns how many pass.
 */
type Narrow = (sel: Int32Array | null, count: number, out: Int32Array) => number;
/** A filter as one loop over its column in a block (null there: the row test is used). */
type BlockNarrow = (view: BlockView) => Narrow | null;

/**
 * A comparison on a stored field as a loop over its column: a dictionary column's entries tested
 * once into a table read by code, an integer column compared as numbers; other encodings (and
 * other filters) null, so that they go through their row test. The row tests (blockFilter) make
 * the same decisions one call per row; bench/scan measured the loop 2-3x cheaper than those calls.
 */
export function blockNarrow(f: Filter): BlockNarrow | null {
  if (f.k !== 'compare' || !plainField(f.field)) return null;
  const test = compareTest(f, hooks);
  const name = f.field;
  const numeric = f.op === '<' || f.op === '<=' || f.op === '>' || f.op === '>=';
  const bound = numeric ? compareNumber(f, hooks) : 0;
  const op = f.op;
  // The entries' answers, refilled block after block: a block's narrow is used before the next
  // block's is made (selectRows), and a typed array of more than 64 bytes made per block was a
  // tenth of `user.plan=enterprise | groupBy(user.geo.country)` (its store outside the heap).
  let table = new Uint8Array(256);
  return (v) => {
    if (numeric) {
      // Kept decoded by an earlier range (kept-ints.ts): the column's frame is not read.
      const held = v.keptInts?.held(name);
      if (held !== undefined) return narrowKept(held, op, bound);
      const col = v.intColumn(name);
      if (col !== null) return narrowInts(v, name, col, op, bound);
    }
    const dict = v.dict(name);
    if (dict === null) return null;
    const { d, codes, absent } = dict;
    // The entries' answers by code; one-byte codes index a table of every code (the absent one,
    // 255, included), two-byte codes one of the entries and one more slot for the absent code.
    const wide = absent !== 255;
    const size = wide ? d.length + 1 : 256;
    if (table.length < size) table = new Uint8Array(Math.max(size, 2 * table.length));
    const pass = table;
    pass.fill(0, 0, size);
    for (let k = 0; k < d.length; k++) pass[k] = test(d[k]) ? 1 : 0;
    pass[wide ? d.length : absent] = test(undefined) ? 1 : 0;
    // Every row is written and the count moves by its answer (0 or 1), with no branch on it: a
    // slot at or below j was read before it is written, so `out` may be `sel`. 1.84 -> 1.28 µs per
    // block of 1,000 one-byte codes with 2.5 % passing (a microbenchmark of the two loops).
    if (wide) {
      const slot = d.length;
      return (sel, count, out) => {
        let k = 0;
        for (let j = 0; j < count; j++) {
          const i = sel === null ? j : sel[j]!;
          const c = codes[i]!;
          out[k] = i;
          // A code past the entries (a damaged column) passes no filter, as before.
          k += pass[c === absent ? slot : c]! | 0;
        }
        return k;
      };
    }
    // The one code that passes, if only one does (-1 when none does, -2 when more than one).
    // Codes from the entries' count to 254 pass nothing (the table was filled with zeros).
    let one = -1;
    for (let c = 0; c < 256 && one !== -2; c = c + 1 === d.length ? 255 : c + 1) if (pass[c] === 1) one = one === -1 ? c : -2;
    return (sel, count, out) => {
      let k = 0;
      if (sel === null) {
        // The whole block: no row passes, or the rows of the one code that does, from the held
        // column's rows by code.
        if (one === -1) return 0;
        const by = one >= 0 && count === codes.length ? rowsByCode(codes) : null;
        if (by !== null) {
          const { at, rows } = by;
          for (let r = at[one]!; r < at[one + 1]!; r++) out[k++] = rows[r]!;
          return k;
        }
        for (let i = 0; i < count; i++) {
          out[k] = i;
          k += pass[codes[i]!]!;
        }
      } else {
        for (let j = 0; j < count; j++) {
          const i = sel[j]!;
          out[k] = i;
          k += pass[codes[i]!]!;
        }
      }
      return k;
    };
  };
}

/** A one-byte dictionary column's rows grouped by code: code c's rows (ascending) are `rows[at[c] .. at[c + 1])`. */
interface CodeRows {
  at: Uint16Array | Int32Array;
  rows: Uint16Array | Int32Array;
}

/**
 * Rows by code of one-byte dictionary codes met before (by their array: a column held beside its
 * kept frame, kept-frames.ts, is the same array query after query): false when met once, null
 * when not made (over the bound). Profile of `user.plan=enterprise | groupBy(user.geo.country)`
 * over 1 M JSON events (docs/benchmarks.md, 2026-11-29 distinct22): the narrow's loop over every
 * code was a quarter of the scan, for the ~2.5 % of rows that pass.
 */
const codeRows = new WeakMap<Uint8Array | Uint16Array, CodeRows | false | null>();
/** Bytes of rows by code per query thread; past it none are made (the loop over the codes is used). */
export const CODE_ROWS_BYTES = 8 * 1024 * 1024;
let codeRowsBytes = 0;
const codeRowsFreed = new FinalizationRegistry<number>((bytes) => {
  codeRowsBytes -= bytes;
});
/** Bytes of rows by code made and not yet collected, for tests. */
export function codeRowsHeld(): number {
  return codeRowsBytes;
}

/** rowsByCode's write positions by code. */
const codeAt = new Int32Array(257);

/** The rows by code of one-byte `codes` at their second use (the first only notes them); null before that or over the bound. */
function rowsByCode(codes: Uint8Array | Uint16Array): CodeRows | null {
  const had = codeRows.get(codes);
  if (had !== false) {
    if (had === undefined) codeRows.set(codes, false);
    return had ?? null;
  }
  const n = codes.length;
  const small = n < 65536;
  const bytes = (257 + n) * (small ? 2 : 4);
  if (codeRowsBytes + bytes > CODE_ROWS_BYTES) {
    codeRows.set(codes, null);
    return null;
  }
  const at = small ? new Uint16Array(257) : new Int32Array(257);
  const rows = small ? new Uint16Array(n) : new Int32Array(n);
  const next = codeAt;
  next.fill(0);
  for (let i = 0; i < n; i++) next[codes[i]! + 1]!++;
  for (let c = 0; c < 256; c++) next[c + 1]! += next[c]!;
  at.set(next);
  for (let i = 0; i < n; i++) rows[next[codes[i]!]!++] = i;
  const made = { at, rows };
  codeRows.set(codes, made);
  codeRowsBytes += bytes;
  codeRowsFreed.register(codes, bytes);
  return made;
}

/** The integers `op` `n` keeps, as [lo, hi] (NaN: none). */
function intRange(op: string, n: number): [number, number] {
  switch (op) {
    case '<':
      return [-Infinity, Math.ceil(n) - 1];
    case '<=':
      return [-Infinity, Math.floor(n)];
    case '>':
      return [Math.floor(n) + 1, Infinity];
    default:
      return [Math.ceil(n), Infinity];
  }
}

function narrowInts(view: BlockView, name: string, col: EncodedNumbers, op: string, n: number): Narrow {
  const [lo, hi] = intRange(op, n);
  return (sel, count, out) => {
    if (sel === null) {
      // The whole block (count = its rows): its values kept decoded by an earlier range
      // (kept-ints.ts), else the deltas compared as they are read (columns.ts).
      const held = view.keptInts === null ? null : view.keptInts.values(name, col, count);
      if (held !== null) return selectIntRange(held, null, count, lo, hi, out);
      const kept = selectDeltaRange(col, count, lo, hi, out);
      if (kept !== null) return kept;
    }
    const ints = view.ints(name)!;
    let k = 0;
    for (let j = 0; j < count; j++) {
      const i = sel === null ? j : sel[j]!;
      const x = ints[i]!;
      if (op === '<' ? x < n : op === '<=' ? x <= n : op === '>' ? x > n : x >= n) out[k++] = i;
    }
    return k;
  };
}

/** A comparison on an integer column kept decoded (kept-ints.ts), for any selection. */
function narrowKept(values: Int32Array, op: string, n: number): Narrow {
  const [lo, hi] = intRange(op, n);
  return (sel, count, out) => selectIntRange(values, sel, count, lo, hi, out);
}

/** The index of the first of `sorted` (ascending) at or above `x` (its length when none is). */
function atOrAbove(sorted: Int32Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The rows of `values` in [lo, hi] (of `sel`, else of 0 .. count-1), written to `rows` (which may be `sel`); how many. */
function selectIntRange(values: Int32Array, sel: Int32Array | null, count: number, lo: number, hi: number, rows: Int32Array): number {
  if (lo > 0x7fffffff || hi < -0x80000000) return 0;
  // The bounds as 32-bit integers too (lo and hi are integers or infinite): compared as such.
  const l = Math.max(lo, -0x80000000) | 0;
  const h = Math.min(hi, 0x7fffffff) | 0;
  let k = 0;
  if (sel === null) {
    for (let i = 0; i < count; i++) {
      const x = values[i]!;
      rows[k] = i;
      k += x >= l && x <= h ? 1 : 0;
    }
  } else {
    for (let j = 0; j < count; j++) {
      const i = sel[j]!;
      const x = values[i]!;
      rows[k] = i;
      k += x >= l && x <= h ? 1 : 0;
    }
  }
  return k;
}

// --- answers from column summaries (segment format 6) -----------------------------------------------

/** A comparison on a stored field, as column summaries decide it. */
interface SummaryFilter {
  field: string;
  op: string;
  test: (s: string | undefined) => boolean;
  /** The number of `<`, `<=`, `>`, `>=`; NaN for other operators. */
  bound: number;
  /** Those operators as a test of a number (null for others), and the integers they keep, [lo, hi] (intRange). */
  cmp: ((x: number) => boolean) | null;
  ints: [number, number];
}

function summaryFilter(f: Filter): SummaryFilter | null {
  if (f.k !== 'compare' || !plainField(f.field)) return null;
  const numeric = f.op === '<' || f.op === '<=' || f.op === '>' || f.op === '>=';
  const bound = numeric ? compareNumber(f, hooks) : Number.NaN;
  return { field: f.field, op: f.op, test: compareTest(f, hooks), bound, cmp: numeric ? numericOp(f.op, bound) : null, ints: numeric ? intRange(f.op, bound) : [Number.NaN, Number.NaN] };
}

/** A name's column in a head's directory: its last occurrence, as BlockView reads it (indexed once per cached head). */
function columnNamed(columns: readonly SummarisedColumn[], name: string): SummarisedColumn | null {
  const k = fieldIndex(columns).last.get(name);
  return k === undefined ? null : columns[k]!;
}

/** A block's integer column kept decoded by this thread, its values in ascending order, by field name (kept-ints.ts); undefined: not kept. */
export type SortedInts = (name: string) => Int32Array | undefined;

/** A column of a block's head as summaryRows reads it (segments/frames.ts ColumnEntry). */
export interface SummarisedColumn {
  field: boolean;
  name: string;
  summary?: ColumnSummary;
}

/** The entries of a dictionary summary that `pass` keeps and some row holds, in code order (= first occurrence). */
function dictTally(s: Extract<ColumnSummary, { kind: 'dict' }>, pass: Uint8Array | null): { keys: string[]; counts: number[] } {
  const keys: string[] = [];
  const counts: number[] = [];
  for (let k = 0; k < s.d.length; k++) {
    if (s.counts[k]! > 0 && (pass === null || pass[k] === 1)) {
      keys.push(s.d[k]!);
      counts.push(s.counts[k]!);
    }
  }
  return { keys, counts };
}

const NO_TALLY = { keys: [], counts: [] };

/**
 * A block's rows (all `n` of them: the block lies wholly in the query range) as the plan's filters
 * select them, read from the column summaries of its head (`columns`, the directory in order);
 * null when the summaries do not decide the selection. They decide it when every filter compares
 * one and the same field and that field's column has a dictionary summary (each entry tested
 * once, its rows counted), or an integer summary whose min and max pass every filter or fail one;
 * or when the block has no column of that field (every row lacks it). An integer summary whose min
 * and max straddle a bound decides the count too when the thread keeps the column's values in
 * order (`sorted`, kept-ints.ts): two binary searches, no frame read, no view made and no loop over
 * the rows (which rows pass is not known then: only aggregates that take a count are answered).
 */
export function summaryRows(plan: ColumnPlan, columns: readonly SummarisedColumn[], n: number, sorted?: SortedInts): SummaryRows | null {
  const filters = plan.summaryFilters;
  if (filters === null) return null;
  const byName = (name: string): SummarisedColumn | null => columnNamed(columns, name);
  let count = n;
  /** The filtered field's dictionary summary and the entries that pass; null: no filter, or not one. */
  let selected: { name: string; s: Extract<ColumnSummary, { kind: 'dict' }>; pass: Uint8Array } | null = null;
  if (filters.length > 0) {
    const field = filters[0]!.field;
    for (let k = 1; k < filters.length; k++) if (filters[k]!.field !== field) return null;
    const col = columnNamed(columns, field);
    const s = col?.summary;
    if (col === null) count = filters.every((f) => f.test(undefined)) ? n : 0;
    else if (s?.kind === 'dict') {
      const pass = new Uint8Array(s.d.length);
      count = 0;
      for (let k = 0; k < s.d.length; k++) {
        const v = s.d[k]!;
        if (filters.every((f) => f.test(v))) {
          pass[k] = 1;
          count += s.counts[k]!;
        }
      }
      if (filters.every((f) => f.test(undefined))) count += s.absent;
      selected = { name: field, s, pass };
    } else if (s?.kind === 'ints' && filters.every((f) => f.cmp !== null)) {
      // `s.n` rows hold an integer in [min, max] (the others none, which no comparison keeps): a
      // filter that both ends pass keeps those rows, one that both fail keeps none (each is a
      // comparison with one bound); otherwise rows differ.
      let none = false;
      let straddles = false;
      for (const f of filters) {
        const lo = f.cmp!(s.min);
        const hi = f.cmp!(s.max);
        if (!lo && !hi) none = true;
        else if (!lo || !hi) straddles = true;
      }
      if (none) count = 0;
      else if (!straddles) count = s.n;
      else {
        // Rows on both sides of a bound: counted in the kept values (every row holds one), if any.
        const values = sorted?.(field);
        if (values === undefined || values.length !== n) return null;
        let lo = -Infinity;
        let hi = Infinity;
        for (const f of filters) {
          lo = Math.max(lo, f.ints[0]);
          hi = Math.min(hi, f.ints[1]);
        }
        // An open end needs no search (a one-sided range, the usual kind: one search, not two).
        count = lo > hi ? 0 : (hi === Infinity ? n : atOrAbove(values, hi + 1)) - (lo === -Infinity ? 0 : atOrAbove(values, lo));
      }
    } else return null;
  }
  const every = count === n;
  return {
    count,
    tally(name) {
      if (count === 0) return NO_TALLY;
      if (selected !== null && selected.name === name) return dictTally(selected.s, selected.pass);
      if (!every) return null;
      const col = byName(name);
      if (col === null) return NO_TALLY;
      return col.summary?.kind === 'dict' ? dictTally(col.summary, null) : null;
    },
    ints(name) {
      if (!every) return null;
      const s = byName(name)?.summary;
      return s?.kind === 'ints' ? s : null;
    },
    minutes() {
      if (!every) return null;
      const s = columns[0]?.summary;
      return s?.kind === 'minutes' ? s : null;
    },
  };
}

/** The selected rows of a block as the aggregates' column paths read them. */
export function columnRows(view: BlockView, sel: Int32Array, count: number): ColumnRows {
  return {
    sel,
    count,
    ts: () => view.ts(),
    dict: (name) => (plainField(name) ? view.dict(name) : null),
    strings: (name) => (plainField(name) ? view.field(name) : null),
    ints: (name) => (plainField(name) ? view.ints(name) : null),
    ipv4: (name) => (plainField(name) ? view.ipv4(name) : null),
    textRun: (name) => (plainField(name) ? view.textRun(name) : null),
    keptTextInts: (name) => (plainField(name) && view.keptInts !== null ? view.keptInts.textInts(name, () => view.textRun(name), view.n) : null),
    keptTextIntCounts: (name) => (plainField(name) && view.keptInts !== null ? view.keptInts.textIntCounts(name) : null),
  };
}

/** tallyField's counts by dictionary code (zero outside a call). */
let codeTally = new Float64Array(256);

/**
 * The distinct values of a stored field over the selected rows with how many rows hold each, in
 * order of first occurrence (as groups are created event by event); rows without the field are
 * left out. Null when `name` is not a plain stored field (the caller then cannot use the column path).
 */
export function tallyField(rows: ColumnRows, name: string): { keys: string[]; counts: number[] } | null {
  if (!plainField(name)) return null;
  const keys: string[] = [];
  const counts: number[] = [];
  const { sel, count } = rows;
  const dict = rows.dict(name);
  if (dict !== null) {
    const { d, codes, absent } = dict;
    // This thread's counts by code, all zero between calls (those used are cleared below): made
    // per block, the array was most of this function's time (a typed array of over 64 bytes has
    // its store outside the heap).
    if (codeTally.length < d.length) codeTally = new Float64Array(Math.max(d.length, 2 * codeTally.length));
    const tally = codeTally;
    const order: number[] = [];
    for (let j = 0; j < count; j++) {
      const c = codes[sel[j]!]!;
      // A code past the entries (a damaged column) is counted for no value, as before.
      if (c === absent || c >= d.length) continue;
      const t = tally[c]!;
      tally[c] = t + 1;
      if (t === 0) order.push(c);
    }
    for (const c of order) {
      keys.push(d[c]!);
      counts.push(tally[c]!);
      tally[c] = 0;
    }
    return { keys, counts };
  }
  // Integer and IPv4 columns, and text columns of integers' canonical texts (user ids in JSON),
  // tallied by number (number-tally.ts): the text of each distinct value is made once per thread
  // (as the column decoder writes it), not once per row or block.
  const nums = numbersOf(rows, name);
  if (nums !== null) {
    const tally = numberTally;
    tally.reset(count);
    if (countNumbers(tally, rows, nums)) return textsOf(tally, nums.kind, count);
  }
  const col = rows.strings(name);
  if (col === null) return { keys, counts };
  const m = new Map<string, number>();
  for (let j = 0; j < count; j++) {
    const v = col[sel[j]!];
    if (v === null || v === undefined) continue;
    const k = m.get(v);
    if (k === undefined) {
      m.set(v, keys.length);
      keys.push(v);
      counts.push(1);
    } else counts[k]!++;
  }
  return { keys, counts };
}

/**
 * A block's column of a field that may be tallied by number: an integer column, an IPv4 column,
 * or a text column, read as numbers when its selected values are integers' canonical texts.
 */
type NumberColumn = { kind: 'int'; ints: readonly number[] } | { kind: 'textInt'; run: { b: Uint8Array; l: Uint8Array } | null; kept: Int32Array | null; pairs: Int32Array | null } | { kind: 'ipv4'; b: Uint8Array };

function numbersOf(rows: ColumnRows, name: string): NumberColumn | null {
  const ints = rows.ints(name);
  if (ints !== null) return { kind: 'int', ints };
  const b = rows.ipv4(name);
  if (b !== null) return { kind: 'ipv4', b };
  // Every row an integer's canonical text, kept decoded: what addTextInts would add, without the digits.
  const kept = rows.keptTextInts?.(name) ?? null;
  if (kept !== null) {
    // Every row selected (ascending, distinct: the last is the block's last): its distinct values with their counts.
    const { sel, count } = rows;
    const all = count === kept.length && (count === 0 || sel[count - 1] === count - 1);
    return { kind: 'textInt', run: null, kept, pairs: all ? (rows.keptTextIntCounts?.(name) ?? null) : null };
  }
  const run = rows.textRun(name);
  return run === null ? null : { kind: 'textInt', run, kept: null, pairs: null };
}

/**
 * Counts the selected rows' numbers into `tally` (room made for them by the caller); false, the
 * tally as it was, when a text column's selected values are not all integers' texts.
 */
function countNumbers(tally: NumberTally, rows: ColumnRows, col: NumberColumn): boolean {
  const { sel, count } = rows;
  if (col.kind === 'int') {
    const ints = col.ints;
    for (let j = 0; j < count; j++) tally.add(ints[sel[j]!]!);
    return true;
  }
  if (col.kind === 'textInt' && col.pairs !== null) {
    tally.addPairs(col.pairs);
    return true;
  }
  if (col.kind === 'textInt' && col.kept !== null) {
    tally.addInts(col.kept, sel, count, NO_INT);
    return true;
  }
  if (col.kind === 'textInt') return col.run !== null && tally.addTextInts(col.run.b, col.run.l, sel, count);
  const b = col.b;
  for (let j = 0; j < count; j++) {
    const o = sel[j]! * 4;
    tally.addSpread(((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0);
  }
  return true;
}

/** A tally's values as the column decoder writes them, with their counts, in order of first occurrence. */
function textsOf(tally: NumberTally, kind: NumberColumn['kind'], rows: number): { keys: string[]; counts: number[] } {
  const keys: string[] = [];
  const counts: number[] = [];
  // Mostly distinct values would only fill the thread's texts with values seen once.
  const keep = tally.size * 2 <= rows;
  for (let k = 0; k < tally.size; k++) {
    const x = tally.value(k);
    keys.push(kind !== 'ipv4' ? (keep ? intText(x) : String(x)) : keep ? ipv4Text(x) : ipv4Dotted(x));
    counts.push(tally.count(k));
  }
  return { keys, counts };
}

/**
 * A tally of an integer or IPv4 field kept across the blocks of a task, for aggregates that take a
 * tally (top, count distinct): each block's selected rows are counted by number, and the values
 * become texts and reach the aggregate's state once (`flush`), not once per block. Blocks of
 * another encoding flush it first, so the state sees the values in order of first occurrence, as
 * event by event. Profile of `top(client)` over 1 M access-log events (bench/peers/ask.mjs,
 * 2026-11-28): two thirds of the scan threads' time was the per-block texts and their map lookups.
 */
export class HeldTally {
  private tally = new NumberTally();
  private kind: NumberColumn['kind'] | null = null;
  private rows = 0;
  private charged = 0;

  constructor(private readonly take: (t: { keys: readonly string[]; counts: readonly number[] }) => void) {}

  /** Counts the block's selected rows of `name`; false (after a flush) when its column there is not numbers or integers' texts. */
  add(rows: ColumnRows, name: string): boolean {
    const nums = plainField(name) ? numbersOf(rows, name) : null;
    if (nums === null || (this.kind !== null && nums.kind !== this.kind)) this.flush();
    if (nums === null) return false;
    this.kind = nums.kind;
    this.tally.reserve(rows.count);
    const bytes = this.tally.bytes;
    if (bytes > this.charged) {
      chargeKept(bytes - this.charged);
      this.charged = bytes;
    }
    if (!countNumbers(this.tally, rows, nums)) {
      // A text column not of integers (most fail on their first value): what is held goes to the
      // aggregate first; an empty tally is kept, arrays and charge, for the next block.
      if (this.tally.size > 0) this.flush();
      else this.kind = null;
      return false;
    }
    this.rows += rows.count;
    return true;
  }

  /** Hands what is held to the aggregate, and holds nothing. */
  flush(): void {
    if (this.kind === null && this.charged === 0) return;
    if (this.kind !== null && this.tally.size > 0) this.take(textsOf(this.tally, this.kind, this.rows));
    releaseKept(this.charged);
    this.tally = new NumberTally();
    this.kind = null;
    this.rows = 0;
    this.charged = 0;
  }
}
