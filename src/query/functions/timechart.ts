/**
 * timeChart() and bucket() (api-facts §1.6, §4.2): events grouped by time bucket (and series), each
 * group aggregated by `function` (default count()). Buckets are aligned to multiples of the span
 * since the epoch (spans of whole days to the time zone's midnight); the first bucket holds the
 * query start and the last the query end, both included, and empty buckets are present. With no
 * span, a "nice" span giving about 100 buckets is chosen: 24 hours gives 15 minutes and 97 buckets.
 * At most `limit` series are shown, those with the largest totals; at most 1,500 buckets.
 */
import { parseRelative } from '../time.js';
import type { Aggregator, ColumnAggregator, Ev, QueryContext } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { addCountToGroup, addToGroup, keyOf, keyText, mergeGroups, statsOf } from './aggregates.js';
import { compareKeys, row } from './common.js';
import type { AggSpec, CompileEnv, FnDef } from './types.js';
import { convertValue, unitFactors } from './units.js';
import { parseZone } from './zones.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
export const MAX_BUCKETS = 1500;
const TARGET_BUCKETS = 100;

const NICE: readonly number[] = [
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND,
  MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
  HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 8 * HOUR, 12 * HOUR,
  DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY,
];

/** The smallest nice span of at least `min` ms (whole 30-day multiples beyond the list). */
export function niceSpanAtLeast(min: number): number {
  for (const s of NICE) if (s >= min) return s;
  return Math.ceil(min / (30 * DAY)) * 30 * DAY;
}

/** `15 minutes`, `1 hour`, `1 day`, `500 milliseconds`. */
export function humanizeSpan(ms: number): string {
  const units: [number, string][] = [
    [DAY, 'day'],
    [HOUR, 'hour'],
    [MINUTE, 'minute'],
    [SECOND, 'second'],
    [1, 'millisecond'],
  ];
  for (const [u, name] of units) {
    if (ms % u === 0) {
      const n = ms / u;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} milliseconds`;
}

export interface Buckets {
  span: number;
  /** Offset (ms) added before flooring: the zone's offset for day-or-larger spans, else 0. */
  shift: number;
  first: number;
  last: number;
}

export function bucketStart(ts: number, b: Pick<Buckets, 'span' | 'shift'>): number {
  return Math.floor((ts + b.shift) / b.span) * b.span - b.shift;
}

function readSpan(a: BoundArgs, name: string): number | undefined {
  const text = a.string(name);
  if (text === undefined) return undefined;
  const ms = parseRelative(text);
  if (ms === null || ms <= 0) return a.fail(name, `parameter ${name} of function ${a.def.name} must be a time span such as 15m, 1h or 1d, not ${text}`);
  return ms;
}

/** The bucket layout for the query range from span/buckets/minSpan/timezone. */
export function planBuckets(a: BoundArgs, ctx: QueryContext, env: CompileEnv): Buckets {
  const range = Math.max(0, ctx.end - ctx.start);
  let span = readSpan(a, 'span');
  if (span === undefined) {
    if (a.has('buckets')) {
      const n = a.number('buckets')!;
      if (!Number.isInteger(n) || n < 1 || n > MAX_BUCKETS) a.fail('buckets', `parameter buckets of function ${a.def.name} must be a whole number from 1 to ${MAX_BUCKETS}`);
      span = Math.max(1, Math.ceil(range / n));
    } else span = niceSpanAtLeast(Math.max(1, range / TARGET_BUCKETS));
  }
  const minSpan = readSpan(a, 'minSpan');
  if (minSpan !== undefined && span < minSpan) span = minSpan;
  let offsetMinutes = ctx.timeZoneOffsetMinutes;
  const tz = a.string('timezone');
  if (tz !== undefined) {
    const zone = parseZone(tz);
    if (zone === null) a.fail('timezone', `parameter timezone of function ${a.def.name}: unknown time zone ${tz}`);
    offsetMinutes = zone.offsetAt(ctx.start);
  }
  const layout = (s: number): Buckets => {
    const shift = s % DAY === 0 ? offsetMinutes * MINUTE : 0;
    return { span: s, shift, first: bucketStart(ctx.start, { span: s, shift }), last: bucketStart(ctx.end, { span: s, shift }) };
  };
  let b = layout(span);
  if ((b.last - b.first) / span + 1 > MAX_BUCKETS) {
    const wider = niceSpanAtLeast(range / (MAX_BUCKETS - 1));
    env.warn(`${a.def.name}: a span of ${humanizeSpan(span)} would give more than ${MAX_BUCKETS} buckets; ${humanizeSpan(wider)} was used`);
    b = layout(wider);
  }
  return b;
}

interface Cell {
  b: number;
  k: string[];
  s: unknown;
}

interface ChartState {
  g: Map<string, Cell>;
  over: number;
}

// --- window() ---------------------------------------------------------------------------------------
//
// window(function, span | buckets) aggregates over the last n buckets of the surrounding timeChart()
// or bucket() (query-functions.md §1): the value at bucket b is the aggregate of the events of
// buckets b-(n-1) .. b. The chart adds each event to the cell of its own bucket and, for window
// functions only, to the cells of the n-1 buckets after it (windowOffset says which of those the
// add is for), so every cell's window state is complete on its own and merges across blocks and
// workers like any state. The first buckets aggregate the buckets that exist before them.

const WINDOW = 'window';
/** The most buckets one window spans (each event is added to that many cells). */
export const MAX_WINDOW_BUCKETS = 200;
/** How many buckets after its own the event being added is (0: its own bucket). */
let windowOffset = 0;
/** The layout of the timeChart()/bucket() whose function= is being compiled; null elsewhere. */
let windowHost: Buckets | null = null;

const windowFunction: FnDef = {
  name: 'window',
  params: [
    { name: 'function', type: 'aggs', unnamed: true, default: 'count(as=_count)' },
    { name: 'span', type: 'string' },
    { name: 'buckets', type: 'number' },
  ],
  agg(a, env): AggSpec {
    const host = windowHost;
    if (host === null) return env.fail(a.call.span, 'window() can only be used as the function argument of timeChart() or bucket()');
    if (a.has('span') === a.has('buckets')) return env.fail(a.call.span, 'window: exactly one of span and buckets must be given');
    let n: number;
    if (a.has('buckets')) {
      n = a.number('buckets')!;
      if (!Number.isInteger(n) || n < 1) a.fail('buckets', 'parameter buckets of function window must be a whole number of at least 1');
    } else {
      // The span is rounded to the nearest multiple of the chart's buckets.
      n = Math.max(1, Math.round(readSpan(a, 'span')! / host.span));
    }
    if (n > MAX_WINDOW_BUCKETS) a.fail(a.has('buckets') ? 'buckets' : 'span', `window: a window of ${n} buckets is more than the ${MAX_WINDOW_BUCKETS} this engine computes; use fewer, wider buckets`);
    windowHost = null; // no window inside a window
    let inner: AggSpec;
    try {
      inner = statsOf(a.aggs('function') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })], a.span('function'), env);
    } finally {
      windowHost = host;
    }
    // A window wider than the chart yields nothing.
    const tooWide = n > (host.last - host.first) / host.span + 1;
    const sub = inner.agg;
    const agg: Aggregator<unknown> = {
      ...sub,
      name: WINDOW,
      add(st, e) {
        if (windowOffset < n) sub.add(st, e);
      },
      finish: (st) => (tooWide ? [] : sub.finish(st)),
    };
    reach.set(agg, n);
    return { agg, outputs: inner.outputs, oneRow: inner.oneRow };
  },
};

/** Buckets each window aggregator spans. */
const reach = new WeakMap<Aggregator<unknown>, number>();

/** An aggregate of the chart that is not a window sees each event once, in its own bucket. */
function ownBucketOnly(spec: AggSpec): AggSpec {
  const sub = spec.agg;
  return {
    ...spec,
    agg: {
      ...sub,
      add(st, e) {
        if (windowOffset === 0) sub.add(st, e);
      },
    },
  };
}

/** The function= aggregates of a chart, with window() allowed among them; `span`: the cells an event reaches. */
function chartFunctions(a: BoundArgs, env: CompileEnv, buckets: Buckets): { specs: AggSpec[]; span: number } {
  windowHost = buckets;
  let specs: AggSpec[];
  try {
    specs = a.aggs('function') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })];
  } finally {
    windowHost = null;
  }
  const widths = specs.map((s) => reach.get(s.agg) ?? 0);
  const span = Math.max(1, ...widths);
  if (span === 1) return { specs, span };
  return { specs: specs.map((s, i) => (widths[i]! > 0 ? s : ownBucketOnly(s))), span };
}

function timeAggregator(name: string, buckets: Buckets, series: string[], sub: Aggregator<unknown>, limit: number, warnOnLimit: boolean, cap: number, windowSpan = 1): Aggregator<ChartState> {
  const { first, last, span } = buckets;
  const seriesOf = (st: ChartState): Map<string, string[]> => {
    const m = new Map<string, string[]>();
    for (const c of st.g.values()) {
      const key = keyText(c.k);
      if (!m.has(key)) m.set(key, c.k);
    }
    return m;
  };
  // Counts without series: numeric bucket indexes per block, or a whole block in one bucket (columnar.ts).
  let columns: ColumnAggregator<ChartState> | undefined;
  if (series.length === 0 && sub.columns?.addCount !== undefined) {
    const noSeries = keyText([]);
    const cell = (st: ChartState, b: number, n: number): void => addCountToGroup(st, `${b}\u0000${noSeries}`, cap, sub, n, () => ({ b, k: [], s: sub.init() }));
    const nb = Math.floor((last - first) / span) + 1;
    const { shift } = buckets;
    const base = Math.floor((first + shift) / span);
    let counts: Float64Array | null = null;
    columns = {
      addSpan(st, minTs, maxTs, n) {
        const b = bucketStart(minTs, buckets);
        if (!Number.isFinite(minTs) || !Number.isFinite(maxTs) || bucketStart(maxTs, buckets) !== b) return false;
        if (b >= first && b <= last) cell(st, b, n);
        return true;
      },
      addRows(st, rows) {
        const ts = rows.ts();
        const { sel, count } = rows;
        // The bucket index straight from the timestamp: floor((t + shift) / span) less the first
        // bucket's, which is what bucketStart() then (b - first) / span gives, without the
        // multiplication back (non-finite timestamps give NaN and are left out). The tally is
        // reused block after block (zeroed through `order`).
        const tally = (counts ??= new Float64Array(nb));
        const order: number[] = [];
        for (let j = 0; j < count; j++) {
          const k = Math.floor((ts[sel[j]!]! + shift) / span) - base;
          if (!(k >= 0 && k < nb)) continue;
          const c = tally[k]!;
          tally[k] = c + 1;
          if (c === 0) order.push(k);
        }
        for (const k of order) {
          cell(st, first + k * span, tally[k]!);
          tally[k] = 0;
        }
      },
      // Events per minute (segment format 6 summaries) when every minute lies in one bucket: a
      // span of whole minutes and a zone shift of whole minutes. Cells are then made in minute
      // order rather than row order, which only matters once the groups' cap is reached: so not
      // when the chart may have more buckets than the cap.
      addSummary(st, rows) {
        const m = rows.minutes();
        if (m === null || span % MINUTE !== 0 || shift % MINUTE !== 0 || nb > cap) return false;
        for (let j = 0; j < m.counts.length; j++) {
          const c = m.counts[j]!;
          if (c === 0) continue;
          const k = Math.floor((m.first + j * MINUTE + shift) / span) - base;
          if (k >= 0 && k < nb) cell(st, first + k * span, c);
        }
        return true;
      },
    };
  }
  return {
    name,
    ...(columns === undefined ? {} : { columns }),
    init: () => ({ g: new Map(), over: 0 }),
    add(st, e) {
      const ts = e.timestamp();
      if (!Number.isFinite(ts)) return;
      const b = bucketStart(ts, buckets);
      if (b < first || b > last) return;
      const k = keyOf(e, series);
      if (k === undefined) return;
      const sk = keyText(k);
      addToGroup(st, `${b}\u0000${sk}`, cap, sub, e, () => ({ b, k, s: sub.init() }));
      if (windowSpan === 1) return;
      // window(): the event is also in the windows of the next windowSpan-1 buckets.
      try {
        for (let j = 1; j < windowSpan; j++) {
          const bj = b + j * span;
          if (bj > last) break;
          windowOffset = j;
          addToGroup(st, `${bj}\u0000${sk}`, cap, sub, e, () => ({ b: bj, k, s: sub.init() }));
        }
      } finally {
        windowOffset = 0;
      }
    },
    merge: (into, other) => mergeGroups(into, other, cap, sub),
    finish(st) {
      const rowsOf = new Map<string, Ev[]>();
      const score = new Map<string, number>();
      for (const [key, cell] of st.g) {
        const rows = sub.finish(cell.s);
        rowsOf.set(key, rows);
        const sk = keyText(cell.k);
        let total = score.get(sk) ?? 0;
        for (const r of rows) {
          for (const n of r.names()) {
            const x = parseNumber(r.get(n));
            if (x !== undefined) total += x;
          }
        }
        score.set(sk, total);
      }
      const all = [...seriesOf(st)];
      let chosen: [string, string[]][];
      if (series.length === 0) chosen = [[keyText([]), []]];
      else {
        chosen = all.sort((x, y) => (score.get(y[0]) ?? 0) - (score.get(x[0]) ?? 0) || compareKeys(x[1], y[1])).slice(0, limit);
        chosen.sort((x, y) => compareKeys(x[1], y[1]));
      }
      let empty: Ev[] | null = null;
      const out: Ev[] = [];
      for (let b = first; b <= last; b += span) {
        const bucket = String(b);
        for (const [sk, k] of chosen) {
          let rows = rowsOf.get(`${b}\u0000${sk}`);
          if (rows === undefined) rows = empty ??= sub.finish(sub.init());
          for (const r of rows) {
            const pairs: [string, string][] = [['_bucket', bucket]];
            series.forEach((f, i) => pairs.push([f, k[i]!]));
            for (const n of r.names()) {
              const v = r.get(n);
              if (v !== undefined && n !== '_bucket' && !series.includes(n)) pairs.push([n, v]);
            }
            out.push(row(pairs));
          }
        }
      }
      return out;
    },
    warnings(st) {
      const out: string[] = [];
      if (st.over > 0) out.push(`${name}: the limit of ${cap} groups was reached and further groups were left out (query.max_groups)`);
      if (warnOnLimit && series.length > 0) {
        const n = seriesOf(st).size;
        if (n > limit) out.push(`${name}: ${n} series found; only the ${limit} largest are shown (raise the limit parameter)`);
      }
      const w = sub.warnings;
      if (w !== undefined) for (const c of st.g.values()) for (const m of w.call(sub, c.s)) if (!out.includes(m)) out.push(m);
      return out;
    },
  };
}

/** `unit=` conversions applied to each function's output values in the finished rows (units.ts). */
function withUnits(a: BoundArgs, chart: Aggregator<ChartState>, specs: readonly AggSpec[], series: readonly string[], span: number): Aggregator<ChartState> {
  const factors = unitFactors(a, specs.length, span);
  if (factors === null) return chart;
  const byName = new Map<string, number>();
  let all: number | null = null;
  specs.forEach((spec, i) => {
    if (spec.outputs !== null) for (const o of spec.outputs) byName.set(o, factors[i]!);
    else if (specs.length === 1) all = factors[i]!;
    else a.fail('unit', `parameter unit of function ${a.def.name}: the output fields of function ${i + 1} are not known, so its conversion has no field to apply to`);
  });
  const factorOf = (n: string): number | undefined => (n === '_bucket' || series.includes(n) ? undefined : (byName.get(n) ?? all ?? undefined));
  return {
    ...chart,
    finish(st) {
      const rows = chart.finish(st);
      for (const r of rows) {
        for (const n of r.names()) {
          const f = factorOf(n);
          const v = f === undefined ? undefined : r.get(n);
          if (v !== undefined) r.set(n, convertValue(v, f!));
        }
      }
      return rows;
    },
  };
}

function timeFunction(name: 'timeChart' | 'bucket'): FnDef {
  const seriesParam = name === 'timeChart' ? 'series' : 'field';
  return {
    name,
    params: [
      name === 'timeChart' ? { name: 'series', type: 'field', unnamed: true } : { name: 'field', type: 'fields' },
      { name: 'function', type: 'aggs', default: 'count(as=_count)' },
      { name: 'span', type: 'string', unnamed: name === 'bucket', default: 'auto' },
      { name: 'buckets', type: 'number' },
      { name: 'limit', type: 'limit', default: '10' },
      { name: 'minSpan', type: 'string' },
      { name: 'timezone', type: 'string' },
      { name: 'unit', type: 'strings', default: '(no conversion)' },
    ],
    agg(a, env): AggSpec {
      const series = a.list(seriesParam, []);
      const limit = a.limit('limit', 10, 500);
      if (limit < 1) a.fail('limit', `parameter limit of function ${name} must be at least 1`);
      const buckets = planBuckets(a, env.ctx, env);
      const { specs, span: windowSpan } = chartFunctions(a, env, buckets);
      const sub = statsOf(specs, a.span('function'), env);
      env.extraData['bucket_first_bucket'] = String(buckets.first);
      env.extraData['bucket_last_bucket'] = String(buckets.last);
      env.extraData['bucket_span_millis'] = String(buckets.span);
      env.extraData['bucket_span_humanized'] = humanizeSpan(buckets.span);
      if (name === 'timeChart') {
        env.extraData['timechart'] = 'true';
        env.extraData['ui:suggested-widget'] = 'time-chart';
      }
      const chart = timeAggregator(name, buckets, series, sub.agg, limit, !a.has('limit'), env.limits.maxGroups, windowSpan);
      const agg = withUnits(a, chart, specs, series, buckets.span);
      const outputs = sub.outputs === null ? null : ['_bucket', ...series, ...sub.outputs.filter((o) => o !== '_bucket' && !series.includes(o))];
      return { agg, outputs, oneRow: false };
    },
  };
}

export const timeFunctions: FnDef[] = [timeFunction('timeChart'), timeFunction('bucket'), windowFunction];
