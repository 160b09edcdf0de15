/**
 * A tiny executor for compiler tests: compiles a query, splits the events into partitions, runs the
 * map stages up to the first aggregate per partition, structured-clones each partial state (as
 * crossing a worker boundary does), merges them into a fresh state, finishes, and runs the rest of
 * the stages over the rows on one "coordinator" state. Comparing 1 and 3 partitions checks that
 * every aggregate merges correctly.
 */
import type { PackedTable } from '../../../src/files/packed.js';
import { compileQuery } from '../../../src/query/compile.js';
import { MapEvent, type Aggregator, type CompiledQuery, type Ev, type QueryContext, type QueryLimits, type Stage } from '../../../src/query/runtime.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** 2020-03-25T14:15:00.394Z-ish: a fixed "now" for every test. */
export const NOW = 1_585_145_700_394;

export function ctxOf(over: Partial<QueryContext> = {}): QueryContext {
  return { start: NOW - DAY, end: NOW, timeZoneOffsetMinutes: 0, now: NOW, live: false, ...over };
}

export type Fields = Record<string, string>;

export interface RunOptions {
  partitions?: number;
  args?: Record<string, string>;
  ctx?: QueryContext;
  limits?: QueryLimits;
  /** Lookup tables by the name the query uses (match(), cidr(file=), readFile()). */
  files?: Readonly<Record<string, PackedTable>>;
}

export interface RunResult {
  rows: Fields[];
  query: CompiledQuery;
  warnings: string[];
}

function toFields(e: Ev): Fields {
  const out: Fields = {};
  for (const n of e.names()) {
    const v = e.get(n);
    if (v !== undefined) out[n] = v;
  }
  return out;
}

function runMaps(stages: readonly Stage[], events: Ev[]): Ev[] {
  let cur = events;
  for (const s of stages) {
    if (s.kind !== 'map') throw new Error('runMaps: aggregate');
    const out: Ev[] = [];
    for (const e of cur) s.run(e, (x) => out.push(x));
    cur = out;
  }
  return cur;
}

/** Runs already compiled `query` over `events` (fresh MapEvents per run). */
export function runCompiled(query: CompiledQuery, events: readonly Fields[], partitions = 3): RunResult {
  const at = query.stages.findIndex((s) => s.kind === 'agg');
  if (at < 0) throw new Error('driver: a compiled query always has an aggregate (implicit tail)');
  const agg = (query.stages[at] as { agg: Aggregator<unknown> }).agg;
  const parts: Ev[][] = Array.from({ length: partitions }, () => []);
  events.forEach((f, i) => parts[i % partitions]!.push(new MapEvent(f)));
  const partials = parts.map((p) => {
    const st = agg.init();
    for (const e of runMaps(query.stages.slice(0, at), p)) agg.add(st, e);
    return structuredClone(st);
  });
  const merged = agg.init();
  for (const p of partials) agg.merge(merged, p);
  const warnings = [...(query.warnings ?? []), ...(agg.warnings?.(merged) ?? [])];
  let rows = agg.finish(merged);
  for (const s of query.stages.slice(at + 1)) {
    if (s.kind === 'map') rows = runMaps([s], rows);
    else {
      const st = s.agg.init();
      for (const r of rows) s.agg.add(st, r);
      warnings.push(...(s.agg.warnings?.(st) ?? []));
      rows = s.agg.finish(st);
    }
  }
  return { rows: rows.map(toFields), query, warnings };
}

export function run(text: string, events: readonly Fields[], opts: RunOptions = {}): RunResult {
  const query = compileQuery(text, {
    ctx: opts.ctx ?? ctxOf(),
    ...(opts.args === undefined ? {} : { args: opts.args }),
    ...(opts.limits === undefined ? {} : { limits: opts.limits }),
    ...(opts.files === undefined ? {} : { files: opts.files }),
  });
  return runCompiled(query, events, opts.partitions ?? 3);
}

/** The rows of `text` over `events`, checking that 1 and 3 partitions agree. */
export function rowsOf(text: string, events: readonly Fields[], opts: RunOptions = {}): Fields[] {
  const three = run(text, events, { ...opts, partitions: 3 });
  const one = run(text, events, { ...opts, partitions: 1 });
  if (JSON.stringify(one.rows) !== JSON.stringify(three.rows)) {
    throw new Error(`driver: 1 and 3 partitions differ for ${text}\n1: ${JSON.stringify(one.rows)}\n3: ${JSON.stringify(three.rows)}`);
  }
  return three.rows;
}

let seq = 0;

/** An event as storage gives it: @timestamp, @rawstring, @id, tags, plus `fields`. */
export function ev(raw: string, fields: Fields = {}, ts?: number): Fields {
  seq++;
  return {
    '@timestamp': String(ts ?? NOW - 1000 * seq),
    '@rawstring': raw,
    '@id': `id${String(seq).padStart(6, '0')}`,
    '@timezone': 'Z',
    '#repo': 'sandbox',
    '#type': 'kv',
    ...fields,
  };
}

/** The values of one field across rows (undefined where absent). */
export function col(rows: readonly Fields[], name: string): (string | undefined)[] {
  return rows.map((r) => r[name]);
}
