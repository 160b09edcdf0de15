/**
 * What a query runs before it starts (query-functions.md §2.14): setTimeInterval() sets the range,
 * defineTable() subqueries become named tables (for match(table=...), readFile() and !match), and
 * each join() subquery becomes a table keyed by the call's position. They are found in the syntax
 * tree on the coordinator, run through the executor like any query (same repository, same bounds),
 * and their rows are packed as lookup tables (src/files/packed.ts), so every worker thread reads the
 * same shared memory, exactly as uploaded files reach them.
 *
 * Bounds: at most MAX_SUBQUERIES subqueries; a join table at most its limit (default 100,000,
 * at most 200,000 rows); a defineTable table at most DEFINE_TABLE_MAX_ROWS rows; past a bound the
 * query fails naming it (the product's result-size quota is the same kind of error).
 */
import { createHash } from 'node:crypto';
import { LogsvcError } from '../lib/errors.js';
import type { Call, Expr, Pipeline, Span } from './ast.js';
import { queryError } from './errors.js';
import { compileQuery } from './compile.js';
import { parsedQuery } from './params.js';
import { callsOf } from './file-refs.js';
import { parseRelative } from './time.js';
import type { Ev, QueryContext } from './runtime.js';
import { packTable, type PackedTable } from '../files/packed.js';

export const MAX_SUBQUERIES = 8;
export const JOIN_DEFAULT_LIMIT = 100_000;
export const JOIN_MAX_LIMIT = 200_000;
export const DEFINE_TABLE_MAX_ROWS = 200_000;
const MAX_COLUMNS = 1000;

/** The table key of the join() call that starts at `offset` in the query text. */
export function joinKey(offset: number): string {
  return `\u0000join@${offset}`;
}

export interface Subquery {
  kind: 'join' | 'defineTable';
  /** Where the result goes in the spec's tables. */
  key: string;
  /** The subquery's text (its `{ ... }` without braces). */
  text: string;
  start: string | undefined;
  end: string | undefined;
  limit: number;
  /** Columns to keep (defineTable include, join key + include); null: all. */
  columns: string[] | null;
  span: Span;
}

export interface Preamble {
  /** setTimeInterval(start=, end=): the range as written. */
  interval: { start: string; end: string | undefined; span: Span } | null;
  subqueries: Subquery[];
}

function scalar(e: Expr | undefined): string | undefined {
  if (e === undefined) return undefined;
  if (e.k === 'str') return e.v;
  if (e.k === 'ident') return e.name;
  if (e.k === 'num') return e.text;
  return undefined;
}

function list(e: Expr | undefined): string[] | undefined {
  if (e === undefined) return undefined;
  if (e.k === 'array') return e.items.map(scalar).filter((x): x is string => x !== undefined);
  const s = scalar(e);
  return s === undefined ? undefined : [s];
}

function argOf(c: Call, name: string, unnamed = false): Expr | undefined {
  for (const a of c.args) {
    if (a.name === null ? unnamed : a.name.toLowerCase() === name.toLowerCase()) return a.value;
  }
  return undefined;
}

/** The calls of a pipeline tree (any depth), in text order. */
function callsIn(p: Pipeline): Call[] {
  return [...callsOf(p)].sort((a, b) => a.span.start - b.span.start);
}

/**
 * setTimeInterval, defineTable and join calls of `text` (params substituted); throws E_QUERY for a
 * bad one. `tree`: `parsedQuery(text, args)` when the caller has it (only read here).
 */
export function preambleOf(text: string, args: Readonly<Record<string, string>>, tree: Pipeline = parsedQuery(text, args)): Preamble {
  const source = text.trim() === '' ? '*' : text;
  const fail = (span: Span, message: string): never => {
    throw queryError(source, span, message);
  };
  const out: Preamble = { interval: null, subqueries: [] };
  const calls = callsIn(tree);
  for (const c of calls) {
    const name = c.name.toLowerCase();
    if (name === 'settimeinterval') {
      const start = scalar(argOf(c, 'start', true));
      if (start === undefined) fail(c.span, 'function setTimeInterval requires parameter start');
      out.interval = { start: start!, end: scalar(argOf(c, 'end')), span: c.span };
      continue;
    }
    if (name !== 'join' && name !== 'definetable') continue;
    const q = argOf(c, 'query', true);
    if (q === undefined || q.k !== 'block') return fail(c.span, `function ${name === 'join' ? 'join' : 'defineTable'} requires parameter query, a { subquery }`);
    const inner = source.slice(q.pipeline.span.start, q.pipeline.span.end);
    if (name === 'join') {
      const limitText = scalar(argOf(c, 'limit'));
      const limit = limitText === undefined ? JOIN_DEFAULT_LIMIT : limitText.toLowerCase() === 'max' ? JOIN_MAX_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > JOIN_MAX_LIMIT) fail(c.span, `join: limit must be a whole number from 1 to ${JOIN_MAX_LIMIT}`);
      const field = list(argOf(c, 'field'));
      if (field === undefined) fail(c.span, 'function join requires parameter field');
      const key = list(argOf(c, 'key')) ?? field!;
      const include = list(argOf(c, 'include')) ?? [];
      for (const p of ['repo', 'view']) if (argOf(c, p) !== undefined) fail(c.span, `join: ${p}= (another repository) is not supported; join within the query's repository`);
      out.subqueries.push({ kind: 'join', key: joinKey(c.span.start), text: inner, start: scalar(argOf(c, 'start')), end: scalar(argOf(c, 'end')), limit, columns: [...new Set([...key, ...include])], span: c.span });
    } else {
      const tname = scalar(argOf(c, 'name'));
      if (tname === undefined || tname === '') return fail(c.span, 'function defineTable requires parameter name');
      if (out.subqueries.some((s) => s.kind === 'defineTable' && s.key === tname)) fail(c.span, `defineTable: the table ${tname} is defined twice`);
      const include = list(argOf(c, 'include'));
      if (include === undefined) fail(c.span, 'function defineTable requires parameter include (the columns to keep, or *)');
      if (argOf(c, 'view') !== undefined) fail(c.span, 'defineTable: view= (another view) is not supported; define tables from the query\'s repository');
      out.subqueries.push({ kind: 'defineTable', key: tname, text: inner, start: scalar(argOf(c, 'start')), end: scalar(argOf(c, 'end')), limit: DEFINE_TABLE_MAX_ROWS, columns: include!.includes('*') ? null : include!, span: c.span });
    }
  }
  if (out.subqueries.length > MAX_SUBQUERIES) fail(out.subqueries[MAX_SUBQUERIES]!.span, `a query may run at most ${MAX_SUBQUERIES} join() and defineTable() subqueries`);
  const names = calls.map((c) => c.name.toLowerCase());
  if (names.includes('definetable') && names.some((n) => n === 'join' || n === 'selfjoin' || n === 'selfjoinfilter')) {
    fail(out.subqueries.find((s) => s.kind === 'defineTable')!.span, 'defineTable() cannot be combined with join(), selfJoin() or selfJoinFilter() in one query');
  }
  return out;
}

/** A time relative to the main query's end (`7d`), or epoch ms; null when unreadable. */
export function relativeTo(end: number, text: string): number | null {
  if (/^\d{10,16}$/.test(text.trim())) return Number(text.trim());
  if (text.trim().toLowerCase() === 'now') return end;
  const d = parseRelative(text);
  return d === null ? null : end - d;
}

/** The main range after setTimeInterval (relative to the query's now). */
export function applyInterval(ctx: QueryContext, p: Preamble, text: string): QueryContext {
  if (p.interval === null) return ctx;
  const start = relativeTo(ctx.now, p.interval.start);
  const end = p.interval.end === undefined ? ctx.now : relativeTo(ctx.now, p.interval.end);
  if (start === null || end === null || start > end) throw queryError(text, p.interval.span, 'setTimeInterval: start and end must be relative times (such as 7d) or epoch milliseconds, start before end');
  return { ...ctx, start, end };
}

/** Rows as a packed table: the given columns (or every name, at most MAX_COLUMNS), strings. */
export function rowsToTable(rows: readonly Ev[], columns: string[] | null): PackedTable {
  let cols = columns;
  if (cols === null) {
    const seen = new Set<string>();
    for (const r of rows) for (const n of r.names()) if (seen.size < MAX_COLUMNS) seen.add(n);
    cols = [...seen];
  }
  const cells = rows.map((r) => cols!.map((c) => r.get(c) ?? null));
  const hash = createHash('sha256').update(JSON.stringify([cols, cells])).digest('hex');
  return packTable(hash, 'csv', { columns: cols, rows: cells, keyColumn: null });
}

export type RunSub = (text: string, ctx: QueryContext) => Promise<{ rows: Ev[] }>;

/** Runs the subqueries of `p` and returns their tables by key. */
export async function runSubqueries(p: Preamble, ctx: QueryContext, text: string, args: Record<string, string>, maxRows: number, run: RunSub): Promise<Record<string, PackedTable>> {
  const out: Record<string, PackedTable> = {};
  for (const s of p.subqueries) {
    const start = s.start === undefined ? ctx.start : relativeTo(ctx.end, s.start);
    const end = s.end === undefined ? ctx.end : relativeTo(ctx.end, s.end);
    if (start === null || end === null || start > end) throw queryError(text, s.span, `${s.kind}: start and end must be relative times (such as 7d, counted back from the query's end) or epoch milliseconds`);
    const subCtx: QueryContext = { ...ctx, start, end };
    // A filter subquery keeps all its rows up to the limit (not the implicit tail(200)).
    let aggregate = true;
    try {
      aggregate = compileQuery(s.text, { ctx: subCtx, args }).isAggregate;
    } catch {
      // The run reports the problem (with the files and tables it is given).
    }
    const subText = aggregate ? s.text : `${s.text}\n| tail(${Math.min(s.limit + 1, maxRows)})`;
    const { rows } = await run(subText, subCtx);
    if (rows.length > s.limit) {
      throw new LogsvcError('E_QUERY', `${s.kind}: the subquery gave more than ${s.limit} rows (${s.kind === 'join' ? `its limit; at most ${JOIN_MAX_LIMIT}` : 'the table size limit'}); narrow the subquery`);
    }
    out[s.key] = rowsToTable(rows, s.columns);
  }
  return out;
}
