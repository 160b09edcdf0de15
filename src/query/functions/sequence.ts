/**
 * Sequence functions (query-functions.md §1 "aggregate (sequence)"): accumulate, neighbor,
 * slidingWindow, slidingTimeWindow, partition and appendAggregation must follow an aggregate that
 * orders its rows (head, sort, groupBy, bucket, timeChart; §2.1) and work on those rows in order;
 * session and series group events by time; transpose turns rows into columns. They keep the rows
 * they see (at most the query's row limit, beyond which a query error names the bound), so they run
 * where rows are in order: on the coordinator after the ordering aggregate.
 */
import type { Aggregator, Ev } from '../runtime.js';
import { MapEvent } from '../runtime.js';
import { parseRelative } from '../time.js';
import { parseNumber } from '../values.js';
import { statsOf } from './aggregates.js';
import type { BoundArgs } from './args.js';
import { pairsOf, row } from './common.js';
import { oneOf } from './define.js';
import type { AggSpec, CompileEnv, FnDef } from './types.js';
import { LogsvcError } from '../../lib/errors.js';

interface Rows {
  r: [string, string][][];
}

function collectRows(name: string, cap: number, finish: (rows: Ev[]) => Ev[]): Aggregator<Rows> {
  return {
    name,
    init: () => ({ r: [] }),
    add(st, e) {
      if (st.r.length >= cap) throw new LogsvcError('E_QUERY', `${name}: more than ${cap} rows; put head(), tail() or a smaller limit before it (query.max_rows)`);
      st.r.push(pairsOf(e));
    },
    merge(into, o) {
      for (const x of o.r) {
        if (into.r.length >= cap) throw new LogsvcError('E_QUERY', `${name}: more than ${cap} rows; put head(), tail() or a smaller limit before it (query.max_rows)`);
        into.r.push(x);
      }
    },
    finish: (st) => finish(st.r.map((p) => new MapEvent(p))),
  };
}

/** The sub-aggregate of a `function` argument, checked to give at most one row. */
function oneRowAgg(a: BoundArgs, env: CompileEnv, def?: string): AggSpec {
  const specs = a.aggs('function') ?? (def === undefined ? a.fail('function', `function ${a.def.name} requires parameter function`) : [env.aggCall({ name: def, args: [], span: a.call.span })]);
  const spec = statsOf(specs, a.span('function'), env);
  if (!spec.oneRow) a.fail('function', `${a.def.name}: the function must be an aggregate that gives one row (such as sum(), count(), avg())`);
  return spec;
}

/** Runs `agg` over `rows` and returns its single row's fields. */
function runOver(agg: Aggregator<unknown>, rows: Iterable<Ev>): [string, string][] {
  const st = agg.init();
  for (const r of rows) agg.add(st, r);
  const out = agg.finish(st)[0];
  return out === undefined ? [] : pairsOf(out);
}

function includeCurrent(a: BoundArgs): boolean {
  return oneOf(a, 'current', ['include', 'exclude'] as const, 'include') === 'include';
}

const accumulate: FnDef = {
  name: 'accumulate',
  afterOrdering: true,
  params: [
    { name: 'function', type: 'aggs', unnamed: true, required: true },
    { name: 'current', type: 'string', default: 'include' },
  ],
  agg(a, env) {
    const sub = oneRowAgg(a, env).agg;
    const current = includeCurrent(a);
    const agg = collectRows('accumulate', env.limits.maxRows, (rows) => {
      const st = sub.init();
      return rows.map((r) => {
        if (current) sub.add(st, r);
        // finish() must not consume the state: aggregates here only read it.
        const res = sub.finish(structuredClone(st))[0];
        if (!current) sub.add(st, r);
        if (res !== undefined) for (const [k, v] of pairsOf(res)) r.set(k, v);
        return r;
      });
    });
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

const neighbor: FnDef = {
  name: 'neighbor',
  afterOrdering: true,
  params: [
    { name: 'include', type: 'fields', unnamed: true, required: true },
    { name: 'direction', type: 'string', default: 'preceding' },
    { name: 'distance', type: 'number', default: '1' },
    { name: 'prefix', type: 'string' },
  ],
  agg(a, env) {
    const include = a.list('include')!;
    const dir = oneOf(a, 'direction', ['preceding', 'succeeding'] as const, 'preceding');
    const d = a.number('distance', 1);
    if (!Number.isInteger(d) || d < 1 || d > 10_000) a.fail('distance', 'neighbor: distance must be a whole number from 1 to 10000');
    const prefix = a.string('prefix');
    const name = (f: string): string => (prefix === undefined ? f : `${prefix}.${f}`);
    const agg = collectRows('neighbor', env.limits.maxRows, (rows) => {
      const src = rows.map((r) => include.map((f) => r.get(f)));
      rows.forEach((r, i) => {
        const j = dir === 'preceding' ? i - d : i + d;
        if (j < 0 || j >= rows.length) return;
        include.forEach((f, k) => {
          const v = src[j]![k];
          if (v !== undefined) r.set(name(f), v);
        });
      });
      return rows;
    });
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

const slidingWindow: FnDef = {
  name: 'slidingWindow',
  afterOrdering: true,
  params: [
    { name: 'function', type: 'aggs', unnamed: true, required: true },
    { name: 'events', type: 'number', required: true },
    { name: 'current', type: 'string', default: 'include' },
  ],
  agg(a, env) {
    const sub = oneRowAgg(a, env).agg;
    const n = a.number('events')!;
    if (!Number.isInteger(n) || n < 1 || n > 1000) a.fail('events', 'slidingWindow: events must be a whole number from 1 to 1000');
    const current = includeCurrent(a);
    const agg = collectRows('slidingWindow', env.limits.maxRows, (rows) => {
      const orig = rows.map((r) => new MapEvent(pairsOf(r)));
      return rows.map((r, i) => {
        const from = current ? i - n + 1 : i - n;
        const to = current ? i + 1 : i;
        for (const [k, v] of runOver(sub, orig.slice(Math.max(0, from), Math.max(0, to)))) r.set(k, v);
        return r;
      });
    });
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

const slidingTimeWindow: FnDef = {
  name: 'slidingTimeWindow',
  afterOrdering: true,
  params: [
    { name: 'function', type: 'aggs', unnamed: true, required: true },
    { name: 'span', type: 'string', required: true },
    { name: 'current', type: 'string', default: 'include' },
    { name: 'timestampfield', type: 'field', default: '@timestamp' },
  ],
  agg(a, env) {
    const sub = oneRowAgg(a, env).agg;
    const span = parseRelative(a.string('span')!);
    if (span === null || span <= 0) a.fail('span', `slidingTimeWindow: span ${a.string('span')} is not a relative time such as 5m`);
    const tf = a.string('timestampfield', '@timestamp');
    const current = includeCurrent(a);
    const agg = collectRows('slidingTimeWindow', env.limits.maxRows, (rows) => {
      const ts = rows.map((r) => parseNumber(r.get(tf)));
      for (let i = 1; i < ts.length; i++) {
        if (ts[i] === undefined || ts[i - 1] === undefined || ts[i]! < ts[i - 1]!) {
          throw new LogsvcError('E_QUERY', `slidingTimeWindow: events must be ordered by ${tf}, oldest first; put sort(${tf}, order=asc) or head() before it`);
        }
      }
      const orig = rows.map((r) => new MapEvent(pairsOf(r)));
      let lo = 0;
      return rows.map((r, i) => {
        while (ts[lo]! <= ts[i]! - span!) lo++;
        if (i - lo > 10_000) lo = i - 10_000;
        for (const [k, v] of runOver(sub, orig.slice(lo, current ? i + 1 : i))) r.set(k, v);
        return r;
      });
    });
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

const partition: FnDef = {
  name: 'partition',
  afterOrdering: true,
  params: [
    { name: 'function', type: 'aggs', unnamed: true, required: true },
    { name: 'condition', type: 'expr', required: true },
    { name: 'split', type: 'string', default: 'before' },
  ],
  agg(a, env) {
    const specs = a.aggs('function')!;
    const sub = statsOf(specs, a.span('function'), env).agg;
    const raw = a.raw('condition')!;
    if (raw.k !== 'block') return a.fail('condition', 'partition: condition must be a { filter } subquery');
    const cond = env.subFilter(raw.pipeline);
    const after = oneOf(a, 'split', ['before', 'after'] as const, 'before') === 'after';
    const agg = collectRows('partition', env.limits.maxRows, (rows) => {
      const out: Ev[] = [];
      let st = sub.init();
      let n = 0;
      const flush = (): void => {
        if (n > 0) out.push(...sub.finish(st));
        st = sub.init();
        n = 0;
      };
      for (const r of rows) {
        const hit = cond(new MapEvent(pairsOf(r)));
        if (hit && !after) flush();
        sub.add(st, r);
        n++;
        if (hit && after) flush();
      }
      flush();
      return out;
    });
    return { agg, outputs: null, oneRow: false };
  },
};

const appendAggregation: FnDef = {
  name: 'appendAggregation',
  afterOrdering: true,
  params: [{ name: 'function', type: 'aggs', unnamed: true, required: true }],
  agg(a, env) {
    const sub = statsOf(a.aggs('function')!, a.span('function'), env).agg;
    const agg = collectRows('appendAggregation', env.limits.maxRows, (rows) => {
      const st = sub.init();
      for (const r of rows) sub.add(st, new MapEvent(pairsOf(r)));
      return [...rows, ...sub.finish(st)];
    });
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

/** Events by time: a mergeable state of (timestamp, fields), sorted when finished. */
interface Timed {
  e: [number, [string, string][]][];
}

function timedRows(name: string, cap: number, finish: (events: [number, Ev][]) => Ev[]): Aggregator<Timed> {
  const push = (st: Timed, x: [number, [string, string][]]): void => {
    if (st.e.length >= cap) throw new LogsvcError('E_QUERY', `${name}: more than ${cap} events; narrow the query or the time range (query.max_rows)`);
    st.e.push(x);
  };
  return {
    name,
    init: () => ({ e: [] }),
    add(st, e) {
      const t = e.timestamp();
      if (Number.isFinite(t)) push(st, [t, pairsOf(e)]);
    },
    merge(into, o) {
      for (const x of o.e) push(into, x);
    },
    finish(st) {
      const sorted = [...st.e].sort((x, y) => x[0] - y[0] || (JSON.stringify(x[1]) < JSON.stringify(y[1]) ? -1 : 1));
      return finish(sorted.map(([t, p]) => [t, new MapEvent(p)]));
    },
  };
}

const session: FnDef = {
  name: 'session',
  params: [
    { name: 'function', type: 'aggs', unnamed: true, default: 'count(as=_count)' },
    { name: 'maxpause', type: 'string', default: '15m' },
  ],
  agg(a, env) {
    const specs = a.aggs('function') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })];
    const sub = statsOf(specs, a.span('function'), env);
    const pause = parseRelative(a.string('maxpause', '15m'));
    if (pause === null) a.fail('maxpause', `session: maxpause ${a.string('maxpause')} is not a relative time such as 15m`);
    const agg = timedRows('session', env.limits.maxRows, (events) => {
      const out: Ev[] = [];
      let st = sub.agg.init();
      let last: number | null = null;
      for (const [t, e] of events) {
        if (last !== null && t - last > pause!) {
          out.push(...sub.agg.finish(st));
          st = sub.agg.init();
        }
        sub.agg.add(st, e);
        last = t;
      }
      if (last !== null) out.push(...sub.agg.finish(st));
      return out;
    });
    return { agg, outputs: sub.outputs, oneRow: false };
  },
};

const series: FnDef = {
  name: 'series',
  params: [
    { name: 'collect', type: 'fields', unnamed: true, required: true },
    { name: 'separator', type: 'string', default: '\\n' },
    { name: 'maxpause', type: 'string' },
    { name: 'maxduration', type: 'string' },
    { name: 'startmatch', type: 'expr' },
    { name: 'endmatch', type: 'expr' },
    { name: 'memlimit', type: 'string', default: '1KiB' },
  ],
  agg(a, env) {
    const fields = a.list('collect')!;
    const sep = a.string('separator', '\n');
    const rel = (n: string): number | null => {
      const t = a.string(n);
      if (t === undefined) return null;
      const v = parseRelative(t);
      if (v === null) a.fail(n, `series: ${n} ${t} is not a relative time such as 5m`);
      return v;
    };
    const maxpause = rel('maxpause');
    const maxduration = rel('maxduration');
    const sub = (n: string): ((e: Ev) => boolean) | null => {
      const raw = a.raw(n);
      if (raw === undefined) return null;
      if (raw.k !== 'block') return a.fail(n, `series: ${n} must be a { filter } subquery`);
      return env.subFilter(raw.pipeline);
    };
    const start = sub('startmatch');
    const end = sub('endmatch');
    const mem = /^(\d+)\s*(KiB|B)?$/i.exec(a.string('memlimit', '1KiB'));
    if (mem === null) a.fail('memlimit', 'series: memlimit must be a size such as 1KiB (at most 1024KiB)');
    const limitBytes = Number(mem![1]) * (mem![2]?.toLowerCase() === 'kib' ? 1024 : 1);
    if (limitBytes < 1 || limitBytes > 1024 * 1024) a.fail('memlimit', 'series: memlimit must be from 1B to 1024KiB');
    const agg = timedRows('series', env.limits.maxRows, (events) => {
      const out: Ev[] = [];
      let cur: { t0: number; last: number; vals: string[][]; bytes: number } | null = null;
      const close = (): void => {
        if (cur === null) return;
        const pairs: [string, string][] = [['@timestamp', String(cur.t0)], ['_duration', String(cur.last - cur.t0)]];
        fields.forEach((f, i) => {
          if (cur!.vals[i]!.length > 0) pairs.push([f, cur!.vals[i]!.join(sep)]);
        });
        out.push(row(pairs));
        cur = null;
      };
      for (const [t, e] of events) {
        const c = cur as { t0: number; last: number; vals: string[][]; bytes: number } | null;
        if (c !== null && ((maxpause !== null && t - c.last > maxpause) || (maxduration !== null && t - c.t0 > maxduration))) close();
        const isStart = start !== null && start(new MapEvent(pairsOf(e)));
        if (isStart && cur !== null) close();
        if (cur === null) {
          if (start !== null && !isStart) continue;
          cur = { t0: t, last: t, vals: fields.map(() => []), bytes: 0 };
        }
        const s = cur as { t0: number; last: number; vals: string[][]; bytes: number };
        s.last = t;
        fields.forEach((f, i) => {
          const v = e.get(f);
          if (v !== undefined && s.bytes + v.length <= limitBytes) {
            s.vals[i]!.push(v);
            s.bytes += v.length;
          }
        });
        if (end !== null && end(new MapEvent(pairsOf(e)))) close();
      }
      close();
      return out;
    });
    return { agg, outputs: null, oneRow: false };
  },
};

const transpose: FnDef = {
  name: 'transpose',
  params: [
    { name: 'pivot', type: 'field', unnamed: true },
    { name: 'column', type: 'string', default: 'column' },
    { name: 'header', type: 'field' },
    { name: 'limit', type: 'number', default: '5' },
  ],
  agg(a, env) {
    const pivot = a.string('pivot');
    const header = a.string('header') ?? pivot;
    const column = a.string('column', pivot ?? 'column');
    const limit = a.number('limit', 5);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) a.fail('limit', 'transpose: limit must be a whole number from 1 to 1000');
    const agg = collectRows('transpose', env.limits.maxRows, (rows) => {
      const kept = rows.slice(0, limit);
      const names: string[] = [];
      for (const r of kept) for (const n of r.names()) if (n !== header && !names.includes(n)) names.push(n);
      const heads = kept.map((r, i) => (header !== undefined ? (r.get(header) ?? `row[${i + 1}]`) : `row[${i + 1}]`));
      return names.map((n) => {
        const pairs: [string, string][] = [[column, n]];
        kept.forEach((r, i) => {
          const v = r.get(n);
          if (v !== undefined) pairs.push([heads[i]!, v]);
        });
        return row(pairs);
      });
    });
    return { agg, outputs: null, oneRow: false };
  },
};

export const sequenceFunctions: FnDef[] = [accumulate, neighbor, slidingWindow, slidingTimeWindow, partition, appendAggregation, session, series, transpose];
