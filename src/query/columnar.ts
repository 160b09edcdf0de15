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
import type { Aggregator, ColumnAggregator, ColumnRows, MapStage } from './runtime.js';
import { hasWildcard } from './wildcard.js';
import { Needle } from './text-match.js';
import { textRowTest } from './text-scan.js';
import { regexLiteral } from './regex-literal.js';
import { LogsvcError } from '../lib/errors.js';

/** One filter specialised to one block: row index -> kept. */
type RowTest = (i: number) => boolean;
type BlockFilter = (view: BlockView) => RowTest;

const RAW = '@rawstring';

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
      const search = { nd, re: lit.exact ? null : re };
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
  let wide = false;
  let at = 0;
  for (; at < maps.length; at++) {
    const fs = maps[at]!.filters;
    if (fs === undefined) break;
    const compiled = fs.map(blockFilter);
    if (compiled.some((c) => c === null)) break;
    filters.push(...(compiled as BlockFilter[]));
    wide ||= fs.some(readsEveryColumn);
  }
  const rest = maps.slice(at);
  return { filters, rest, agg: rest.length === 0 ? (agg.columns ?? null) : null, wide };
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

/** The rows of `view` in [start, end] (all when `whole`) that pass the plan's filters. */
export function selectRows(plan: ColumnPlan, view: BlockView, whole: boolean, start: number, end: number): { sel: Int32Array; inRange: number; count: number } {
  const n = view.n;
  const sel = new Int32Array(n);
  let count = 0;
  if (whole) {
    for (let i = 0; i < n; i++) sel[i] = i;
    count = n;
  } else {
    const ts = view.ts();
    for (let i = 0; i < n; i++) {
      const t = ts[i]!;
      if (t >= start && t <= end) sel[count++] = i;
    }
  }
  const inRange = count;
  for (const f of plan.filters) {
    if (count === 0) break;
    const test = f(view);
    let k = 0;
    for (let j = 0; j < count; j++) {
      const i = sel[j]!;
      if (test(i)) sel[k++] = i;
    }
    count = k;
  }
  return { sel, inRange, count };
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
  };
}

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
    const tally = new Float64Array(d.length);
    const order: number[] = [];
    for (let j = 0; j < count; j++) {
      const c = codes[sel[j]!]!;
      if (c === absent) continue;
      const t = tally[c]!;
      tally[c] = t + 1;
      if (t === 0) order.push(c);
    }
    for (const c of order) {
      keys.push(d[c]!);
      counts.push(tally[c]!);
    }
    return { keys, counts };
  }
  // Integer and IPv4 columns tallied by number: the text of each distinct value is made once
  // (as the column decoder writes it), not once per row.
  const ints = rows.ints(name);
  const ip = ints === null ? rows.ipv4(name) : null;
  if (ints !== null || ip !== null) {
    const at = new Map<number, number>();
    for (let j = 0; j < count; j++) {
      const i = sel[j]!;
      const o = i * 4;
      const x = ints !== null ? ints[i]! : ((ip![o]! << 24) | (ip![o + 1]! << 16) | (ip![o + 2]! << 8) | ip![o + 3]!) >>> 0;
      const k = at.get(x);
      if (k !== undefined) {
        counts[k]!++;
        continue;
      }
      at.set(x, keys.length);
      keys.push(ints !== null ? String(x) : `${ip![o]}.${ip![o + 1]}.${ip![o + 2]}.${ip![o + 3]}`);
      counts.push(1);
    }
    return { keys, counts };
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
