/**
 * Aggregate functions (api-facts §4.2): count, sum, avg, min, max, range, stdDev, percentile,
 * stats and the `[a(), b()]` list, groupBy and top. States are plain objects and Maps (mergeable
 * partials built on worker threads); values are printed as the product prints them.
 */
import type { Span } from '../ast.js';
import { checkValueSize } from '../limits.js';
import { approxBytes, chargeKept, stringBytes } from '../memory.js';
import { HeldTally, plainField, tallyField } from '../columnar.js';
import type { Aggregator, ColumnAggregator, ColumnRows, Ev } from '../runtime.js';
import { formatNumber, parseNumber } from '../values.js';
import { compareKeys, row } from './common.js';
import { distinctAdd, distinctCount, distinctInit, distinctMerge, quantileAdd, quantileInit, quantileMerge, quantiles, type DistinctState, type QuantileState } from './sketches.js';
import type { AggSpec, CompileEnv, FnDef } from './types.js';
import { eachNumber, percentileColumns } from './percentile-columns.js';

function one(agg: Aggregator<any>, output: string | null): AggSpec {
  return { agg, outputs: output === null ? null : [output], oneRow: true };
}

// --- count ---------------------------------------------------------------------------------------

const count: FnDef = {
  name: 'count',
  params: [
    { name: 'field', type: 'field', unnamed: true },
    { name: 'distinct', type: 'bool', default: 'false' },
    { name: 'as', type: 'string', default: '_count' },
  ],
  agg(a) {
    const field = a.string('field');
    const as = a.string('as', '_count');
    if (a.bool('distinct', false)) {
      const f = field ?? a.fail('distinct', 'count(distinct=true) needs a field');
      // Each distinct value of a block's selected rows once, in order of first occurrence: adding a
      // value again leaves the state as it is, so this is the state event-by-event gives.
      const addKeys = (st: DistinctState, t: { keys: readonly string[] }): void => {
        for (const key of t.keys) distinctAdd(st, key);
      };
      const held = heldTallies<DistinctState>(f, addKeys);
      const columns: ColumnAggregator<DistinctState> = {
        addRows(st, rows) {
          if (!held.add(st, rows)) addKeys(st, tallyField(rows, f)!);
        },
        addSummary(st, rows) {
          const t = rows.tally(f);
          if (t === null) return false;
          held.flush(st);
          addKeys(st, t);
          return true;
        },
        flush: held.flush,
      };
      const agg: Aggregator<DistinctState> = {
        name: 'count',
        ...(plainField(f) ? { columns } : {}),
        init: distinctInit,
        add(st, e) {
          const v = e.get(f);
          if (v !== undefined) distinctAdd(st, v);
        },
        merge(into, other) {
          held.flush(into);
          held.flush(other);
          distinctMerge(into, other);
        },
        finish: (st) => [row([[as, String(distinctCount(st))]])],
      };
      return one(agg, as);
    }
    const agg: Aggregator<{ n: number }> = {
      name: 'count',
      ...(field === undefined ? { columns: countColumns } : plainField(field) ? { columns: countFieldColumns(field) } : {}),
      init: () => ({ n: 0 }),
      add:
        field === undefined
          ? (st) => {
              st.n++;
            }
          : (st, e) => {
              if (e.has(field)) st.n++;
            },
      merge(into, other) {
        into.n += other.n;
      },
      finish: (st) => [row([[as, String(st.n)]])],
    };
    return one(agg, as);
  },
};

/** count(): n events at once (the column path, columnar.ts). */
const countColumns: ColumnAggregator<{ n: number }> = {
  addCount(st, n) {
    st.n += n;
  },
  addRows(st, rows) {
    st.n += rows.count;
  },
  addSummary(st, rows) {
    st.n += rows.count;
    return true;
  },
};

/** count(field): the selected rows that hold the field. */
function countFieldColumns(field: string): ColumnAggregator<{ n: number }> {
  return {
    addRows(st, rows) {
      const col = rows.strings(field);
      if (col === null) return;
      const { sel, count } = rows;
      let n = 0;
      for (let j = 0; j < count; j++) {
        const v = col[sel[j]!];
        if (v !== null && v !== undefined) n++;
      }
      st.n += n;
    },
  };
}

// --- numeric summaries ---------------------------------------------------------------------------

interface NumState {
  n: number;
  sum: number;
  sq: number;
  min: number;
  max: number;
}

type NumOut = (st: NumState) => number | undefined;

function numAdd(st: NumState, x: number): void {
  st.n++;
  st.sum += x;
  st.sq += x * x;
  if (x < st.min) st.min = x;
  if (x > st.max) st.max = x;
}

/**
 * sum/avg/min/max/range/stdDev over a block's column, rows in order (the same sums as event by
 * event); all but stdDev also from an integer column's summary (segment format 6), when every
 * sum stays exact: the state's sum an integer and |state sum| + n * max |value| within 2^53, so
 * every partial sum of adding the values one by one is an exact integer, and adding the block's
 * sum at once gives the same (the squares are not summarised: stdDev reads the rows).
 */
function numericColumns(field: string, squares: boolean): ColumnAggregator<NumState> {
  const columns: ColumnAggregator<NumState> = {
    addRows(st, rows) {
      // An integer column: numbers as stored (parseNumber of their canonical text gives them back).
      eachNumber(rows, field, (x) => numAdd(st, x));
    },
  };
  if (squares) return columns;
  columns.addSummary = (st, rows) => {
    const s = rows.ints(field);
    if (s === null || !Number.isSafeInteger(s.sum) || !Number.isSafeInteger(st.sum)) return false;
    if (Math.abs(st.sum) + s.n * Math.max(Math.abs(s.min), Math.abs(s.max)) > Number.MAX_SAFE_INTEGER) return false;
    st.n += s.n;
    st.sum += s.sum;
    if (s.min < st.min) st.min = s.min;
    if (s.max > st.max) st.max = s.max;
    return true;
  };
  return columns;
}

function numeric(name: string, defAs: string, out: NumOut, emptyZero: boolean): FnDef {
  return {
    name,
    params: [
      { name: 'field', type: 'field', unnamed: true, required: true },
      { name: 'as', type: 'string', default: defAs },
      // min()/max() list a `type` parameter whose values the docs leave undocumented (query-functions.md
      // §4): accepted, so pasted queries compile, and it changes nothing (docs/query-language.md).
      ...(name === 'min' || name === 'max' ? [{ name: 'type', type: 'string' as const, default: '(accepted, no effect)' }] : []),
    ],
    agg(a) {
      const field = a.string('field')!;
      const as = a.string('as', defAs);
      const agg: Aggregator<NumState> = {
        name,
        ...(plainField(field) ? { columns: numericColumns(field, name === 'stdDev') } : {}),
        init: () => ({ n: 0, sum: 0, sq: 0, min: Infinity, max: -Infinity }),
        add(st, e) {
          const x = parseNumber(e.get(field));
          if (x === undefined) return;
          numAdd(st, x);
        },
        merge(into, o) {
          into.n += o.n;
          into.sum += o.sum;
          into.sq += o.sq;
          if (o.min < into.min) into.min = o.min;
          if (o.max > into.max) into.max = o.max;
        },
        finish(st) {
          if (st.n === 0) return [row(emptyZero ? [[as, '0']] : [])];
          const v = out(st);
          return [row(v === undefined || !Number.isFinite(v) ? [] : [[as, formatNumber(v)]])];
        },
      };
      return one(agg, as);
    },
  };
}

const sum = numeric('sum', '_sum', (s) => s.sum, true);
const avg = numeric('avg', '_avg', (s) => s.sum / s.n, false);
const min = numeric('min', '_min', (s) => s.min, false);
const max = numeric('max', '_max', (s) => s.max, false);
const range = numeric('range', '_range', (s) => s.max - s.min, false);
const stdDev = numeric('stdDev', '_stddev', (s) => Math.sqrt(Math.max(0, s.sq / s.n - (s.sum / s.n) ** 2)), false);

// --- percentile ----------------------------------------------------------------------------------

const percentile: FnDef = {
  name: 'percentile',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'percentiles', type: 'numbers', default: '[50, 75, 99]' },
    { name: 'accuracy', type: 'number', default: '0.01' },
    { name: 'as', type: 'string', default: '' },
  ],
  agg(a) {
    const field = a.string('field')!;
    const ps = a.numbers('percentiles', [50, 75, 99]);
    for (const p of ps) if (p < 0 || p > 100) a.fail('percentiles', `percentile: ${p} is not between 0 and 100`);
    const accuracy = a.number('accuracy', 0.01);
    if (!(accuracy > 0 && accuracy < 1)) a.fail('accuracy', 'percentile: accuracy must be between 0 and 1 (exclusive)');
    const prefix = a.string('as', '');
    const names = ps.map((p) => `${prefix}_${formatNumber(p)}`);
    const agg: Aggregator<QuantileState> = {
      name: 'percentile',
      ...(plainField(field) ? { columns: percentileColumns(field) } : {}),
      init: () => quantileInit(accuracy),
      add(st, e) {
        const x = parseNumber(e.get(field));
        if (x !== undefined) quantileAdd(st, x);
      },
      merge: quantileMerge,
      finish(st) {
        const qs = quantiles(st, ps);
        const pairs: [string, string][] = [];
        qs.forEach((q, i) => {
          if (q !== undefined) pairs.push([names[i]!, formatNumber(q)]);
        });
        return [row(pairs)];
      },
    };
    return { agg, outputs: names, oneRow: true };
  },
};

// --- stats ---------------------------------------------------------------------------------------

/** Combines aggregates per stats() rules: one-row results merge into one row, else a Cartesian product. */
export function statsOf(specs: AggSpec[], span: Span, env: CompileEnv): AggSpec {
  if (specs.length === 1) return specs[0]!;
  const seen = new Set<string>();
  for (const s of specs) {
    for (const o of s.outputs ?? []) {
      if (seen.has(o)) env.fail(span, `stats: more than one function outputs the field ${o}; give them different as= names`);
      seen.add(o);
    }
  }
  const aggs = specs.map((s) => s.agg);
  const agg: Aggregator<unknown[]> = {
    name: 'stats',
    init: () => aggs.map((x) => x.init()),
    add(st, e) {
      for (let i = 0; i < aggs.length; i++) aggs[i]!.add(st[i], e);
    },
    merge(into, other) {
      for (let i = 0; i < aggs.length; i++) aggs[i]!.merge(into[i], other[i]);
    },
    finish(st) {
      let rows: [string, string][][] = [[]];
      for (let i = 0; i < aggs.length; i++) {
        const sub = aggs[i]!.finish(st[i]).map((r) => pairsOfRow(r));
        if (sub.length === 0) continue;
        const next: [string, string][][] = [];
        for (const left of rows) for (const right of sub) next.push([...left, ...right]);
        rows = next;
      }
      return rows.map((p) => row(p));
    },
    warnings(st) {
      const out: string[] = [];
      for (let i = 0; i < aggs.length; i++) {
        const w = aggs[i]!.warnings;
        if (w !== undefined) out.push(...w.call(aggs[i], st[i]));
      }
      return out;
    },
  };
  const outputs = specs.every((s) => s.outputs !== null) ? specs.flatMap((s) => s.outputs!) : null;
  return { agg, outputs, oneRow: specs.every((s) => s.oneRow) };
}

function pairsOfRow(r: Ev): [string, string][] {
  const out: [string, string][] = [];
  for (const n of r.names()) {
    const v = r.get(n);
    if (v !== undefined) out.push([n, v]);
  }
  return out;
}

const stats: FnDef = {
  name: 'stats',
  params: [{ name: 'function', type: 'aggs', unnamed: true }],
  agg(a, env) {
    const specs = a.aggs('function') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })];
    return statsOf(specs, a.span('function'), env);
  },
};

// --- groupBy -------------------------------------------------------------------------------------

interface Group {
  k: string[];
  s: unknown;
}

export interface GroupState {
  g: Map<string, Group>;
  /** Events whose group could not be created (limit reached). */
  over: number;
}

/** Reads the key of `e` over `fields`; undefined when a field is missing (the event has no group). */
export function keyOf(e: Ev, fields: readonly string[]): string[] | undefined {
  const k: string[] = [];
  for (const f of fields) {
    const v = e.get(f);
    if (v === undefined) return undefined;
    k.push(v);
  }
  return k;
}

export function keyText(k: readonly string[]): string {
  return k.length === 1 ? k[0]! : JSON.stringify(k);
}

/** Groups keyed by text, each with a sub-aggregate state, at most `cap` of them (`over` counts what was left out). */
export interface CappedGroups<G extends { s: unknown }> {
  g: Map<string, G>;
  over: number;
}

/** groupBy's default limit (the product's GroupDefaultLimit). */
export const GROUP_DEFAULT_LIMIT = 20_000;

/** Estimated bytes of one group besides its key and sub-state (map entry, group object, key array). */
const GROUP_BYTES = 160;

/** Adds `e` to group `key`, creating it (with `make`) only while fewer than `cap` groups exist. */
export function addToGroup<G extends { s: unknown }>(st: CappedGroups<G>, key: string, cap: number, sub: Aggregator<unknown>, e: Ev, make: () => G): void {
  let grp = st.g.get(key);
  if (grp === undefined) {
    if (st.g.size >= cap) {
      st.over++;
      return;
    }
    grp = make();
    chargeKept(GROUP_BYTES + 2 * stringBytes(key));
    st.g.set(key, grp);
  }
  sub.add(grp.s, e);
}

/** Adds `n` events that read nothing but their key (sub has columns.addCount) to group `key`, as `n` addToGroup calls would. */
export function addCountToGroup<G extends { s: unknown }>(st: CappedGroups<G>, key: string, cap: number, sub: Aggregator<unknown>, n: number, make: () => G): void {
  let grp = st.g.get(key);
  if (grp === undefined) {
    if (st.g.size >= cap) {
      st.over += n;
      return;
    }
    grp = make();
    chargeKept(GROUP_BYTES + 2 * stringBytes(key));
    st.g.set(key, grp);
  }
  sub.columns!.addCount!(grp.s, n);
}

/** Merges partial group maps under the same cap. */
export function mergeGroups<G extends { s: unknown }>(into: CappedGroups<G>, other: CappedGroups<G>, cap: number, sub: Aggregator<unknown>): void {
  into.over += other.over;
  for (const [key, grp] of other.g) {
    const mine = into.g.get(key);
    if (mine !== undefined) sub.merge(mine.s, grp.s);
    else if (into.g.size < cap) {
      chargeKept(GROUP_BYTES + 2 * stringBytes(key) + approxBytes(grp.s));
      into.g.set(key, grp);
    } else into.over++;
  }
}

/** A keyed aggregate over `fields` with `sub` per group, holding at most `cap` groups. */
export function groupedAggregator(name: string, fields: string[], sub: Aggregator<unknown>, cap: number, limitNote: string): Aggregator<GroupState> {
  const one = fields.length === 1 && plainField(fields[0]!) ? fields[0]! : null;
  // One stored field and a sub-aggregate that only counts: a tally per block (columnar.ts).
  const columns: ColumnAggregator<GroupState> | undefined =
    one === null || sub.columns?.addCount === undefined
      ? undefined
      : {
          addRows(st, rows) {
            addGroupTally(st, tallyField(rows, one)!);
          },
          addSummary(st, rows) {
            const t = rows.tally(one);
            if (t === null) return false;
            addGroupTally(st, t);
            return true;
          },
        };
  function addGroupTally(st: GroupState, t: { keys: readonly string[]; counts: readonly number[] }): void {
    for (let k = 0; k < t.keys.length; k++) {
      const key = t.keys[k]!;
      addCountToGroup(st, key, cap, sub, t.counts[k]!, () => ({ k: [key], s: sub.init() }));
    }
  }
  return {
    name,
    ...(columns === undefined ? {} : { columns }),
    init: () => ({ g: new Map(), over: 0 }),
    add(st, e) {
      const k = keyOf(e, fields);
      if (k === undefined) return;
      const key = keyText(k);
      addToGroup(st, key, cap, sub, e, () => ({ k, s: sub.init() }));
    },
    merge: (into, other) => mergeGroups(into, other, cap, sub),
    finish(st) {
      const groups = [...st.g.values()].sort((x, y) => compareKeys(x.k, y.k));
      const out: Ev[] = [];
      for (const grp of groups) {
        const keyPairs: [string, string][] = fields.map((f, i) => [f, grp.k[i]!]);
        for (const r of sub.finish(grp.s)) {
          const pairs = [...keyPairs];
          for (const p of pairsOfRow(r)) if (!fields.includes(p[0])) pairs.push(p);
          out.push(row(pairs));
        }
      }
      return out;
    },
    warnings(st) {
      const out: string[] = [];
      if (st.over > 0) out.push(`${name} returned incomplete results limited to a restricted subset of groups and related events: the limit of ${cap} groups was exceeded (${limitNote})`);
      const w = sub.warnings;
      if (w !== undefined) {
        for (const grp of st.g.values()) {
          for (const m of w.call(sub, grp.s)) if (!out.includes(m)) out.push(m);
        }
      }
      return out;
    },
  };
}

const groupBy: FnDef = {
  name: 'groupBy',
  params: [
    { name: 'field', type: 'fields', unnamed: true, required: true },
    { name: 'function', type: 'aggs', default: 'count(as=_count)' },
    { name: 'limit', type: 'limit', default: '20000' },
  ],
  agg(a, env) {
    const fields = a.list('field')!;
    if (fields.length === 0) a.fail('field', 'groupBy needs at least one field');
    const specs = a.aggs('function') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })];
    const sub = specs.length === 0 ? emptyAgg() : statsOf(specs, a.span('function'), env);
    const cap = a.limit('limit', GROUP_DEFAULT_LIMIT, env.limits.maxGroups);
    const agg = groupedAggregator('groupBy', fields, sub.agg, cap, `limit=${cap}; raise it up to limit=max, ${env.limits.maxGroups} groups`);
    const outputs = sub.outputs === null ? null : [...fields, ...sub.outputs.filter((o) => !fields.includes(o))];
    return { agg, outputs, oneRow: false };
  },
};

/** `function=[]`: one empty row per group (distinct combinations only). */
function emptyAgg(): AggSpec {
  const agg: Aggregator<number> = { name: 'none', init: () => 0, add() {}, merge() {}, finish: () => [row([])] };
  return { agg, outputs: [], oneRow: true };
}

// --- top -----------------------------------------------------------------------------------------

/**
 * Each state's HeldTally of field `name` (made on a state's first block of numbers), handing its
 * tally to `take` when flushed.
 */
function heldTallies<S extends object>(name: string, take: (st: S, t: { keys: readonly string[]; counts: readonly number[] }) => void): { add(st: S, rows: ColumnRows): boolean; flush(st: S): void } {
  const held = new WeakMap<S, HeldTally>();
  return {
    add(st, rows) {
      let h = held.get(st);
      if (h === undefined) held.set(st, (h = new HeldTally((t) => take(st, t))));
      return h.add(rows, name);
    },
    flush(st) {
      const h = held.get(st);
      if (h === undefined) return;
      held.delete(st);
      h.flush();
    },
  };
}

interface TopState {
  c: Map<string, { k: string[]; n: number }>;
  total: number;
  over: number;
}

const top: FnDef = {
  name: 'top',
  params: [
    { name: 'field', type: 'fields', unnamed: true, required: true },
    { name: 'limit', type: 'limit', default: '10' },
    { name: 'percent', type: 'bool', default: 'false' },
    { name: 'rest', type: 'string' },
    { name: 'sum', type: 'field' },
    { name: 'max', type: 'field' },
    { name: 'as', type: 'string', default: '_count' },
    { name: 'error', type: 'number' },
  ],
  agg(a, env) {
    const fields = a.list('field')!;
    const limit = a.limit('limit', 10, env.limits.maxRows);
    if (limit < 1) a.fail('limit', 'top: limit must be at least 1');
    const percent = a.bool('percent', false);
    const rest = a.string('rest');
    const sumField = a.string('sum');
    const maxField = a.string('max');
    if (sumField !== undefined && maxField !== undefined) a.fail('max', 'top: give sum or max, not both');
    const as = a.string('as', sumField !== undefined ? '_sum' : maxField !== undefined ? '_max' : '_count');
    // Distinct values counted exactly: groupBy's default limit (query.max_groups is groupBy's limit=max).
    const cap = Math.min(env.limits.maxGroups, GROUP_DEFAULT_LIMIT);
    const weight = (e: Ev): number | undefined => {
      if (sumField !== undefined) return parseNumber(e.get(sumField));
      if (maxField !== undefined) return parseNumber(e.get(maxField));
      return 1;
    };
    const combine = maxField !== undefined ? Math.max : (x: number, y: number) => x + y;
    const one = fields.length === 1 && plainField(fields[0]!) && sumField === undefined && maxField === undefined ? fields[0]! : null;
    // Counts of one stored field: a tally per block (columnar.ts), as `add` per event would count.
    const columns: ColumnAggregator<TopState> | undefined =
      one === null
        ? undefined
        : {
            addRows(st, rows) {
              if (!held!.add(st, rows)) addTopTally(st, tallyField(rows, one)!);
            },
            addSummary(st, rows) {
              const t = rows.tally(one!);
              if (t === null) return false;
              held!.flush(st);
              addTopTally(st, t);
              return true;
            },
            flush: (st) => held!.flush(st),
          };
    // Integer and IPv4 values counted across a task's blocks by number (columnar.ts HeldTally).
    const held = one === null ? null : heldTallies<TopState>(one, (st, t) => addTopTally(st, t));
    function addTopTally(st: TopState, t: { keys: readonly string[]; counts: readonly number[] }): void {
      for (let k = 0; k < t.keys.length; k++) {
        const key = t.keys[k]!;
        const n = t.counts[k]!;
        st.total += n;
        const cur = st.c.get(key);
        if (cur !== undefined) cur.n += n;
        else if (st.c.size < cap) {
          chargeKept(GROUP_BYTES + 2 * stringBytes(key));
          st.c.set(key, { k: [key], n });
        } else st.over += n;
      }
    }
    const agg: Aggregator<TopState> = {
      name: 'top',
      ...(columns === undefined ? {} : { columns }),
      init: () => ({ c: new Map(), total: 0, over: 0 }),
      add(st, e) {
        const k = keyOf(e, fields);
        if (k === undefined) return;
        const w = weight(e);
        if (w === undefined) return;
        st.total += w;
        const key = keyText(k);
        const cur = st.c.get(key);
        if (cur !== undefined) cur.n = combine(cur.n, w);
        else if (st.c.size < cap) {
          chargeKept(GROUP_BYTES + 2 * stringBytes(key));
          st.c.set(key, { k, n: w });
        } else st.over++;
      },
      merge(into, other) {
        held?.flush(into);
        held?.flush(other);
        into.total += other.total;
        into.over += other.over;
        for (const [key, v] of other.c) {
          const cur = into.c.get(key);
          if (cur !== undefined) cur.n = combine(cur.n, v.n);
          else if (into.c.size < cap) {
            chargeKept(GROUP_BYTES + 2 * stringBytes(key));
            into.c.set(key, v);
          } else into.over++;
        }
      },
      finish(st) {
        const all = [...st.c.values()].sort((x, y) => y.n - x.n || compareKeys(x.k, y.k));
        const chosen = all.slice(0, limit);
        const out: Ev[] = chosen.map((v) => {
          const pairs: [string, string][] = fields.map((f, i) => [f, v.k[i]!]);
          pairs.push([as, formatNumber(v.n)]);
          if (percent) pairs.push(['percent', formatNumber(st.total === 0 ? 0 : (v.n / st.total) * 100)]);
          return row(pairs);
        });
        if (rest !== undefined && maxField === undefined && (all.length > chosen.length || st.over > 0)) {
          const shown = chosen.reduce((s, v) => s + v.n, 0);
          const pairs: [string, string][] = fields.map((f) => [f, rest]);
          pairs.push([as, formatNumber(st.total - shown)]);
          if (percent) pairs.push(['percent', formatNumber(st.total === 0 ? 0 : ((st.total - shown) / st.total) * 100)]);
          out.push(row(pairs));
        }
        return out;
      },
      warnings: (st) => (st.over > 0 ? [`top: the limit of ${cap} distinct values was reached; counts of further values are only in the total (query.max_groups)`] : []),
    };
    return { agg, outputs: [...fields, as, ...(percent ? ['percent'] : [])], oneRow: false };
  },
};

// --- collect -------------------------------------------------------------------------------------

/** Distinct values per field, at most `limit` each; printed sorted and joined by the separator. */
const collect: FnDef = {
  name: 'collect',
  params: [
    { name: 'fields', type: 'fields', unnamed: true, required: true },
    { name: 'limit', type: 'limit', default: '2000' },
    { name: 'separator', type: 'string', default: '\\n' },
    { name: 'multival', type: 'bool', default: 'true' },
  ],
  agg(a, env) {
    const fields = a.list('fields')!;
    const limit = a.limit('limit', 2000, env.limits.maxRows);
    const sep = a.string('separator', '\n');
    const multival = a.bool('multival', true);
    const agg: Aggregator<{ v: Map<string, true>[]; over: boolean }> = {
      name: 'collect',
      init: () => ({ v: fields.map(() => new Map<string, true>()), over: false }),
      add(st, e) {
        fields.forEach((f, i) => {
          const x = e.get(f);
          const m = st.v[i]!;
          if (x === undefined || m.has(x)) return;
          if (m.size < limit) {
            chargeKept(32 + stringBytes(x));
            m.set(x, true);
          } else st.over = true;
        });
      },
      merge(into, other) {
        into.over ||= other.over;
        other.v.forEach((m, i) => {
          const mine = into.v[i]!;
          for (const x of m.keys()) {
            if (mine.has(x)) continue;
            if (mine.size < limit) {
              chargeKept(32 + stringBytes(x));
              mine.set(x, true);
            } else into.over = true;
          }
        });
      },
      finish(st) {
        const sorted = st.v.map((m) => [...m.keys()].sort());
        if (!multival) {
          // multival=false: a row per value (query-functions.md §1); with several fields, row j holds
          // each field's j-th value (in order) where it has one.
          const n = Math.max(0, ...sorted.map((v) => v.length));
          return Array.from({ length: n }, (_, j) => row(fields.flatMap((f, i): [string, string][] => (j < sorted[i]!.length ? [[f, sorted[i]![j]!]] : []))));
        }
        return [row(fields.flatMap((f, i): [string, string][] => {
          const values = sorted[i]!;
          if (values.length === 0) return [];
          checkValueSize('collect', values.reduce((n, x) => n + x.length, 0) + sep.length * (values.length - 1));
          return [[f, values.join(sep)]];
        }))];
      },
      warnings: (st) => (st.over ? [`collect: more than ${limit} distinct values; the rest were left out (the limit parameter)`] : []),
    };
    return { agg, outputs: fields, oneRow: multival };
  },
};

export const aggregateFunctions: FnDef[] = [count, sum, avg, min, max, range, stdDev, percentile, stats, groupBy, top, collect];
