/**
 * More aggregate functions (query-functions.md §1): selectLast, selectFromMax, selectFromMin,
 * sankey, counterAsRate, fieldset, fieldstats, linReg, callFunction, percentage, createEvents.
 * Every state is plain data that merges associatively (partials from worker threads), and ties are
 * broken by content so the answer does not depend on how events were split across blocks.
 */
import { plainField } from '../columnar.js';
import type { Aggregator, ColumnAggregator } from '../runtime.js';
import { formatNumber, parseNumber } from '../values.js';
import { row } from './common.js';
import { distinctAdd, distinctCount, distinctInit, distinctMerge, type DistinctState } from './sketches.js';
import type { AggSpec, FnDef } from './types.js';

function one(agg: Aggregator<any>, outputs: string[] | null): AggSpec {
  return { agg, outputs, oneRow: true };
}

/**
 * An event's order for "most recent": its @timestamp, then (the same millisecond) its value, so
 * the answer does not depend on how events were split across blocks. (Not @id: reading it costs
 * more than the rest of selectLast per event.)
 */
type Stamp = [number, string];

const selectLast: FnDef = {
  name: 'selectLast',
  params: [{ name: 'fields', type: 'fields', unnamed: true, required: true }],
  agg(a) {
    const fields = a.list('fields')!;
    const agg: Aggregator<{ v: Record<string, Stamp> }> = {
      name: 'selectLast',
      init: () => ({ v: {} }),
      add(st, e) {
        const t = e.timestamp();
        const ts = Number.isFinite(t) ? t : -Infinity;
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i]!;
          const cur = st.v[f];
          // An older event never wins: its value is not read.
          if (cur !== undefined && ts < cur[0]) continue;
          const x = e.get(f);
          if (x === undefined) continue;
          if (cur === undefined) st.v[f] = [ts, x];
          else if (ts > cur[0] || x > cur[1]) {
            cur[0] = ts;
            cur[1] = x;
          }
        }
      },
      merge(into, other) {
        for (const [f, s] of Object.entries(other.v)) {
          const cur = into.v[f];
          if (cur === undefined || s[0] > cur[0] || (s[0] === cur[0] && s[1] > cur[1])) into.v[f] = s;
        }
      },
      finish: (st) => [row(fields.flatMap((f): [string, string][] => (st.v[f] === undefined ? [] : [[f, st.v[f]![1]]])))],
    };
    return one(agg, fields);
  },
};

function selectFrom(name: 'selectFromMax' | 'selectFromMin'): FnDef {
  const better = name === 'selectFromMax' ? (x: number, y: number) => x > y : (x: number, y: number) => x < y;
  return {
    name,
    params: [
      { name: 'field', type: 'field', unnamed: true, required: true },
      { name: 'include', type: 'fields', required: true },
    ],
    agg(a) {
      const field = a.string('field')!;
      const include = a.list('include')!;
      // Ties are broken by the included values, field by field (a missing value sorts first), so
      // the answer does not depend on how events were split across blocks.
      type St = { x: number | null; v: (string | null)[] };
      const smaller = (v: readonly (string | null)[], w: readonly (string | null)[]): boolean => {
        for (let i = 0; i < v.length; i++) {
          const p = v[i] ?? null;
          const q = w[i] ?? null;
          if (p === q) continue;
          return p === null || (q !== null && p < q);
        }
        return false;
      };
      const agg: Aggregator<St> = {
        name,
        ...(plainField(field) && include.every(plainField) ? { columns: selectFromColumns(field, include, better, smaller) } : {}),
        init: () => ({ x: null, v: [] }),
        add(st, e) {
          const x = parseNumber(e.get(field));
          if (x === undefined) return;
          if (st.x !== null && x !== st.x && !better(x, st.x)) return;
          if (x === st.x) {
            // A tie: compared in place; only a winner is copied.
            let wins = false;
            for (let i = 0; i < include.length; i++) {
              const p = e.get(include[i]!) ?? null;
              const q = st.v[i] ?? null;
              if (p === q) continue;
              wins = p === null || (q !== null && p < q);
              break;
            }
            if (!wins) return;
          }
          st.x = x;
          st.v = include.map((f) => e.get(f) ?? null);
        },
        merge(into, other) {
          if (other.x === null) return;
          if (into.x === null || better(other.x, into.x) || (other.x === into.x && smaller(other.v, into.v))) {
            into.x = other.x;
            into.v = other.v;
          }
        },
        finish: (st) => [row(st.x === null ? [] : include.flatMap((f, i): [string, string][] => (st.v[i] == null ? [] : [[f, st.v[i]!]])))],
      };
      return one(agg, include);
    },
  };
}

/**
 * selectFromMax/Min's column path: the block's best number first (an integer column as stored,
 * others parsed), then the included values of only the rows that hold it, so a block that cannot
 * change the answer never reads (decodes) the included columns. The same state `add` reaches: the
 * best number, ties going to the smallest included values.
 */
function selectFromColumns(
  field: string,
  include: readonly string[],
  better: (x: number, y: number) => boolean,
  smaller: (v: readonly (string | null)[], w: readonly (string | null)[]) => boolean,
): ColumnAggregator<{ x: number | null; v: (string | null)[] }> {
  return {
    addRows(st, rows) {
      const { sel, count } = rows;
      const ints = rows.ints(field);
      const col = ints === null ? rows.strings(field) : null;
      if (ints === null && col === null) return;
      const at = (i: number): number | undefined => (ints !== null ? ints[i] : parseNumber(col![i] ?? undefined));
      let best: number | undefined;
      for (let j = 0; j < count; j++) {
        const x = at(sel[j]!);
        if (x !== undefined && (best === undefined || better(x, best))) best = x;
      }
      if (best === undefined || (st.x !== null && best !== st.x && !better(best, st.x))) return;
      const cols = include.map((f) => rows.strings(f));
      let win: (string | null)[] | null = null;
      for (let j = 0; j < count; j++) {
        const i = sel[j]!;
        if (at(i) !== best) continue;
        const v = cols.map((c) => c?.[i] ?? null);
        if (win === null || smaller(v, win)) win = v;
      }
      if (st.x === null || best !== st.x || smaller(win!, st.v)) {
        st.x = best;
        st.v = win!;
      }
    },
  };
}

/** sankey(source, target, weight=count()): the weight per (source, target) edge. */
const sankey: FnDef = {
  name: 'sankey',
  params: [
    { name: 'source', type: 'field', required: true },
    { name: 'target', type: 'field', required: true },
    { name: 'weight', type: 'aggs', default: 'count(as=_count)' },
  ],
  agg(a, env) {
    const source = a.string('source')!;
    const target = a.string('target')!;
    const call = { name: 'groupBy', span: a.call.span, args: [{ name: 'field', value: { k: 'array' as const, items: [{ k: 'ident' as const, name: source, span: a.call.span }, { k: 'ident' as const, name: target, span: a.call.span }], span: a.call.span }, span: a.call.span }] };
    const w = a.raw('weight');
    if (w !== undefined) call.args.push({ name: 'function', value: w as never, span: a.span('weight') });
    return env.aggCall(call);
  },
};

/** counterAsRate: (last - first) / seconds between them, over the counter's events. */
const counterAsRate: FnDef = {
  name: 'counterAsRate',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '_rate' },
  ],
  agg(a) {
    const field = a.string('field')!;
    const as = a.string('as', '_rate');
    type End = [number, number] | null;
    const agg: Aggregator<{ lo: End; hi: End }> = {
      name: 'counterAsRate',
      init: () => ({ lo: null, hi: null }),
      add(st, e) {
        const x = parseNumber(e.get(field));
        const t = e.timestamp();
        if (x === undefined || !Number.isFinite(t)) return;
        if (st.lo === null || t < st.lo[0] || (t === st.lo[0] && x < st.lo[1])) st.lo = [t, x];
        if (st.hi === null || t > st.hi[0] || (t === st.hi[0] && x > st.hi[1])) st.hi = [t, x];
      },
      merge(into, o) {
        if (o.lo !== null && (into.lo === null || o.lo[0] < into.lo[0] || (o.lo[0] === into.lo[0] && o.lo[1] < into.lo[1]))) into.lo = o.lo;
        if (o.hi !== null && (into.hi === null || o.hi[0] > into.hi[0] || (o.hi[0] === into.hi[0] && o.hi[1] > into.hi[1]))) into.hi = o.hi;
      },
      finish(st) {
        if (st.lo === null || st.hi === null || st.hi[0] === st.lo[0]) return [row([])];
        return [row([[as, formatNumber((st.hi[1] - st.lo[1]) / ((st.hi[0] - st.lo[0]) / 1000))]])];
      },
    };
    return one(agg, [as]);
  },
};

const FIELDSET_MAX = 10_000;

const fieldset: FnDef = {
  name: 'fieldset',
  params: [],
  agg() {
    const agg: Aggregator<{ n: Record<string, true>; over: boolean }> = {
      name: 'fieldset',
      init: () => ({ n: {}, over: false }),
      add(st, e) {
        for (const n of e.names()) {
          if (st.n[n] === true) continue;
          if (Object.keys(st.n).length >= FIELDSET_MAX) st.over = true;
          else st.n[n] = true;
        }
      },
      merge(into, o) {
        into.over ||= o.over;
        for (const n of Object.keys(o.n)) if (Object.keys(into.n).length < FIELDSET_MAX) into.n[n] = true;
      },
      finish: (st) => Object.keys(st.n).sort().map((n) => row([['field', n]])),
      warnings: (st) => (st.over ? [`fieldset: more than ${FIELDSET_MAX} field names; the rest were left out`] : []),
    };
    return { agg, outputs: ['field'], oneRow: false };
  },
};

const fieldstats: FnDef = {
  name: 'fieldstats',
  params: [{ name: 'limit', type: 'limit', default: '200' }],
  agg(a) {
    const limit = a.limit('limit', 200, 10_000);
    if (limit < 1) a.fail('limit', 'fieldstats: limit must be at least 1');
    type F = { c: number; d: DistinctState };
    const agg: Aggregator<{ f: Map<string, F>; over: boolean }> = {
      name: 'fieldstats',
      init: () => ({ f: new Map(), over: false }),
      add(st, e) {
        for (const n of e.names()) {
          const v = e.get(n);
          if (v === undefined) continue;
          let s = st.f.get(n);
          if (s === undefined) {
            if (st.f.size >= limit) {
              st.over = true;
              continue;
            }
            st.f.set(n, (s = { c: 0, d: distinctInit() }));
          }
          s.c++;
          distinctAdd(s.d, v);
        }
      },
      merge(into, o) {
        into.over ||= o.over;
        for (const [n, s] of o.f) {
          const mine = into.f.get(n);
          if (mine !== undefined) {
            mine.c += s.c;
            distinctMerge(mine.d, s.d);
          } else if (into.f.size < limit) into.f.set(n, s);
          else into.over = true;
        }
      },
      finish: (st) =>
        [...st.f.keys()].sort().map((n) => {
          const s = st.f.get(n)!;
          return row([
            ['field', n],
            ['_count', String(s.c)],
            ['distinct', String(distinctCount(s.d))],
          ]);
        }),
      warnings: (st) => (st.over ? [`fieldstats: more than ${limit} fields; the rest were left out (the limit parameter)`] : []),
    };
    return { agg, outputs: ['field', '_count', 'distinct'], oneRow: false };
  },
};

/** linReg: least squares of y on x; _slope, _intercept, _r2 (adjusted when n > 2) and _n. */
const linReg: FnDef = {
  name: 'linReg',
  params: [
    { name: 'x', type: 'field', required: true },
    { name: 'y', type: 'field', required: true },
    { name: 'prefix', type: 'string', default: '_' },
  ],
  agg(a) {
    const xf = a.string('x')!;
    const yf = a.string('y')!;
    const p = a.string('prefix', '_');
    const names = [`${p}slope`, `${p}intercept`, `${p}r2`, `${p}n`];
    type S = { n: number; sx: number; sy: number; sxx: number; syy: number; sxy: number };
    const agg: Aggregator<S> = {
      name: 'linReg',
      init: () => ({ n: 0, sx: 0, sy: 0, sxx: 0, syy: 0, sxy: 0 }),
      add(st, e) {
        const x = parseNumber(e.get(xf));
        const y = parseNumber(e.get(yf));
        if (x === undefined || y === undefined) return;
        st.n++;
        st.sx += x;
        st.sy += y;
        st.sxx += x * x;
        st.syy += y * y;
        st.sxy += x * y;
      },
      merge(into, o) {
        into.n += o.n;
        into.sx += o.sx;
        into.sy += o.sy;
        into.sxx += o.sxx;
        into.syy += o.syy;
        into.sxy += o.sxy;
      },
      finish(st) {
        const vx = st.n * st.sxx - st.sx * st.sx;
        const vy = st.n * st.syy - st.sy * st.sy;
        if (st.n < 2 || Math.abs(vx) < 1e-12 || Math.abs(vy) < 1e-12) return [row([])];
        const slope = (st.n * st.sxy - st.sx * st.sy) / vx;
        const intercept = (st.sy - slope * st.sx) / st.n;
        const r = (st.n * st.sxy - st.sx * st.sy) / Math.sqrt(vx * vy);
        let r2 = r * r;
        if (st.n > 2) r2 = 1 - ((1 - r2) * (st.n - 1)) / (st.n - 2);
        return [
          row([
            [names[0]!, formatNumber(slope)],
            [names[1]!, formatNumber(intercept)],
            [names[2]!, formatNumber(r2)],
            [names[3]!, String(st.n)],
          ]),
        ];
      },
    };
    return one(agg, names);
  },
};

const CALLABLE = ['avg', 'count', 'max', 'min', 'range', 'sum'];

const callFunction: FnDef = {
  name: 'callFunction',
  params: [
    { name: 'function', type: 'string', unnamed: true, required: true },
    { name: 'field', type: 'field', required: true },
    { name: 'as', type: 'string', default: '_function' },
  ],
  agg(a, env) {
    const fn = a.string('function')!.toLowerCase();
    if (!CALLABLE.includes(fn)) a.fail('function', `callFunction: function must be one of ${CALLABLE.join(', ')}, not ${a.string('function')}`);
    const span = a.call.span;
    const call = {
      name: fn,
      span,
      args: [
        { name: 'field', value: { k: 'ident' as const, name: a.string('field')!, span }, span },
        { name: 'as', value: { k: 'str' as const, v: a.string('as', '_function'), span }, span },
      ],
    };
    return env.aggCall(call);
  },
};

/** percentage({filter}): the share (0–100) of events the filter keeps. */
const percentage: FnDef = {
  name: 'percentage',
  params: [
    { name: 'condition', type: 'expr', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '_percentage' },
  ],
  agg(a, env) {
    const raw = a.raw('condition')!;
    if (raw.k !== 'block') return a.fail('condition', 'percentage: condition must be a { filter } subquery');
    const pred = env.subFilter(raw.pipeline);
    const as = a.string('as', '_percentage');
    const agg: Aggregator<{ n: number; m: number }> = {
      name: 'percentage',
      init: () => ({ n: 0, m: 0 }),
      add(st, e) {
        st.n++;
        if (pred(e.clone())) st.m++;
      },
      merge(into, o) {
        into.n += o.n;
        into.m += o.m;
      },
      finish: (st) => [row(st.n === 0 ? [] : [[as, formatNumber((st.m / st.n) * 100)]])],
    };
    return one(agg, [as]);
  },
};

const MAX_CREATED = 10_000;

/** createEvents(["a", "b"]): a source; the incoming events are discarded, one event per string. */
const createEvents: FnDef = {
  name: 'createEvents',
  params: [{ name: 'rawstring', type: 'strings', unnamed: true, required: true }],
  agg(a, env) {
    const raws = a.list('rawstring')!;
    if (raws.length > MAX_CREATED) a.fail('rawstring', `createEvents: at most ${MAX_CREATED} events`);
    const now = String(env.ctx.now);
    const agg: Aggregator<number> = {
      name: 'createEvents',
      init: () => 0,
      add() {},
      merge() {},
      finish: () => raws.map((r) => row([['@timestamp', now], ['@rawstring', r]])),
    };
    return { agg, outputs: null, oneRow: false };
  },
};

export const moreAggregateFunctions: FnDef[] = [selectLast, selectFrom('selectFromMax'), selectFrom('selectFromMin'), sankey, counterAsRate, fieldset, fieldstats, linReg, callFunction, percentage, createEvents];
