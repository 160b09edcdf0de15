/**
 * Joins and correlation (query-functions.md §1 join-correlation, §2.14): join, defineTable,
 * readFile, selfJoin, selfJoinFilter and setTimeInterval. The subqueries of join() and
 * defineTable() ran before the query (subqueries.ts); their rows arrive as packed tables in the
 * compile's files, a join's under its call position, a defined table under its name (so
 * match(table=...) and readFile() read it like an uploaded file). selfJoin and selfJoinFilter need
 * every event of a key before they can tell whether the key qualifies, so they are aggregates that
 * keep what they need, bounded (keys by `limit`, events by query.max_rows); past a bound the query
 * fails naming it.
 */
import type { PackedTable } from '../../files/packed.js';
import { BlockView, ColumnEvent, rowFlat, type BlockOrigin, type RowColumns } from '../block-view.js';
import { bodyColumns, type BlockBody } from '../../segments/frames.js';
import { cellValue, viewsOf } from '../../files/packed.js';
import { LogsvcError } from '../../lib/errors.js';
import type { Expr, Filter } from '../ast.js';
import type { Aggregator, Ev } from '../runtime.js';
import { joinKey } from '../subqueries.js';
import type { BoundArgs } from './args.js';
import { keyOf, keyText } from './aggregates.js';
import { pairsOf, row } from './common.js';
import { buildStage } from './lookups.js';
import { oneOf } from './define.js';
import type { CompileEnv, FnDef } from './types.js';

function packed(env: CompileEnv, a: BoundArgs, key: string, what: string): PackedTable {
  const t = env.files !== null && Object.hasOwn(env.files, key) ? env.files[key] : undefined;
  if (t === undefined) return a.env.fail(a.call.span, `${a.def.name}(): ${what} was not run; ${a.def.name}() works in queries run through the query API (not in parsers or alert validation alone)`);
  return t;
}

const join: FnDef = {
  name: 'join',
  params: [
    { name: 'query', type: 'expr', unnamed: true, required: true },
    { name: 'field', type: 'fields', required: true },
    { name: 'key', type: 'fields', default: '(field)' },
    { name: 'include', type: 'strings', default: '(none)' },
    { name: 'mode', type: 'string', default: 'inner' },
    { name: 'limit', type: 'limit', default: '100000' },
    { name: 'max', type: 'number', default: '1' },
    { name: 'start', type: 'string', default: '(the main query start)' },
    { name: 'end', type: 'string', default: '(the main query end)' },
    { name: 'live', type: 'bool' },
    { name: 'repo', type: 'string' },
    { name: 'view', type: 'string' },
  ],
  stage(a, env) {
    if (a.raw('query')!.k !== 'block') return a.fail('query', 'join: query must be a { subquery }');
    const mode = oneOf(a, 'mode', ['inner', 'left'] as const, 'inner');
    const max = a.number('max', 1);
    if (!Number.isInteger(max) || max < 1 || max > 500) a.fail('max', 'join: max must be a whole number from 1 to 500');
    const fields = a.list('field')!;
    const keys = a.list('key') ?? fields;
    if (keys.length !== fields.length) a.fail('key', `join: key names ${keys.length} fields but field names ${fields.length}; give one key per field`);
    const table = packed(env, a, joinKey(a.call.span.start), 'the join subquery');
    const include = (a.list('include') ?? []).map((c) => table.columns.indexOf(c)).filter((i) => i >= 0);
    const columns = keys.map((k) => table.columns.indexOf(k));
    if (columns.some((c) => c < 0) || table.nRows === 0) {
      // No row has the key: an inner join keeps nothing, a left join every event unchanged.
      return mode === 'inner' ? { pure: true, run() {} } : { pure: true, run: (e, emit) => emit(e) };
    }
    return buildStage({ table, fields, columns, include, strict: mode === 'inner', mode: 'string', ignoreCase: false, nrows: max });
  },
};

/** defineTable(): its table was built before the query; in the pipeline it passes events through. */
const defineTable: FnDef = {
  name: 'defineTable',
  params: [
    { name: 'query', type: 'expr', unnamed: true, required: true },
    { name: 'name', type: 'string', required: true },
    { name: 'include', type: 'strings', required: true },
    { name: 'start', type: 'string', default: '(the main query start)' },
    { name: 'end', type: 'string', default: '(the main query end)' },
    { name: 'view', type: 'string' },
  ],
  stage(a) {
    if (a.raw('query')!.k !== 'block') return a.fail('query', 'defineTable: query must be a { subquery }');
    return { pure: true, run: (e, emit) => emit(e) };
  },
};

const setTimeInterval: FnDef = {
  name: 'setTimeInterval',
  params: [
    { name: 'start', type: 'string', unnamed: true, required: true },
    { name: 'end', type: 'string', default: 'now' },
    { name: 'timezone', type: 'string' },
  ],
  // The range was applied before the query ran (subqueries.ts); here it only passes events through.
  stage: () => ({ pure: true, run: (e, emit) => emit(e) }),
};

/** readFile(file or [files]): the rows of lookup files or defined tables as events; the input is discarded. */
const readFile: FnDef = {
  name: 'readFile',
  params: [
    { name: 'file', type: 'strings', unnamed: true, required: true, aliases: ['table'] },
    { name: 'include', type: 'strings' },
    { name: 'limit', type: 'number' },
  ],
  agg(a, env) {
    const names = a.list('file')!;
    const tables = names.map((n) => {
      const t = env.files !== null && Object.hasOwn(env.files, n) ? env.files[n] : undefined;
      if (t === undefined) return a.fail('file', `readFile(): "${n}" is neither a lookup file of the repository nor a table defined with defineTable()`);
      return t;
    });
    const include = a.list('include');
    const limit = a.number('limit');
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) a.fail('limit', 'readFile: limit must be a whole number, 1 or more');
    const cap = Math.min(limit ?? Infinity, env.limits.maxRows);
    const agg: Aggregator<number> = {
      name: 'readFile',
      init: () => 0,
      add() {},
      merge() {},
      finish() {
        const out: Ev[] = [];
        for (const t of tables) {
          const v = viewsOf(t);
          for (let r = 0; r < t.nRows && out.length < cap; r++) {
            const pairs: [string, string][] = [];
            t.columns.forEach((c, i) => {
              if (c === '' || (include !== undefined && !include.includes(c))) return;
              const x = cellValue(v, r, i);
              if (x !== undefined) pairs.push([c, x]);
            });
            out.push(row(pairs));
          }
        }
        return out;
      },
    };
    return { agg, outputs: include ?? null, oneRow: false };
  },
};

// --- selfJoin / selfJoinFilter --------------------------------------------------------------------

/** An event kept in a state as one flat array `[name, value, name, value, ...]` (one allocation, clone-safe). */
type Flat = string[];

function flatOf(e: Ev): Flat {
  const out: Flat = [];
  for (const n of e.names()) {
    const v = e.get(n);
    if (v !== undefined) out.push(n, v);
  }
  return out;
}

function flatGet(f: Flat, name: string): string | undefined {
  for (let i = 0; i < f.length; i += 2) if (f[i] === name) return f[i + 1];
  return undefined;
}

function flatPairs(f: Flat): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < f.length; i += 2) out.push([f[i]!, f[i + 1]!]);
  return out;
}

/**
 * A kept event: a flat copy, or `block * ROW_SPAN + row`, a reference to row `row` of the state's
 * block `block` (KeptBlock). Most keys never qualify, so most kept events are never read again:
 * a row of a block read in the scan (a ColumnEvent nothing was set on) is kept as that number, its
 * fields read only if its key qualifies.
 */
type Kept = Flat | number;
const ROW_SPAN = 2 ** 21;

/** A block some of whose rows are kept by reference. */
interface KeptBlock {
  /**
   * A stored block as stored (BlockView.encodedBody: its columns encoded, no value decoded) and its
   * origin: most kept rows are never read, so a block's values are decoded only when one is (which
   * also keeps a state small and cheap for the garbage collector: a block's decoded columns are
   * tens of thousands of strings). Null for a block in memory, and once compacted.
   */
  e: { body: BlockBody; origin: BlockOrigin } | null;
  /** Its row columns: a block in memory's (shared with the view), or made from `e` on the first read; null once compacted. */
  c: RowColumns | null;
  /** The rows kept from it. */
  r: number[];
  /** Once compacted: row -> the row's flat copy. */
  f: Map<number, Flat> | null;
}

interface KeyState {
  /** Key text -> [clause mask, events kept]. */
  k: Map<string, [number, Kept[]]>;
  events: number;
  /** Blocks referred to by kept events; the last is the block rows are being kept from. */
  b: KeptBlock[];
}

/** A kept block's row columns (decoded from its stored columns on the first call); null once compacted. */
function rowsOf(kb: KeptBlock): RowColumns | null {
  if (kb.c === null && kb.e !== null) kb.c = BlockView.fromEncoded(bodyColumns(kb.e.body), kb.e.origin).rowColumns();
  return kb.c;
}

/**
 * A block left with fewer than half its rows kept keeps copies of those rows instead of its
 * columns, so a state holds at most one block (the one being read) beyond what copies would hold.
 */
function compact(kb: KeptBlock): void {
  const n = kb.e?.body.n ?? kb.c?.n;
  if (n === undefined || kb.r.length * 2 >= n) return;
  const c = rowsOf(kb)!;
  kb.f = new Map(kb.r.map((row) => [row, rowFlat(c, row)]));
  kb.c = null;
  kb.e = null;
}

/** An event as kept: by reference into the state's current block when it is a stored row, else a flat copy. */
function keepRow(st: KeyState, e: Ev): Kept {
  const view = e instanceof ColumnEvent ? e.storedView() : null;
  if (view === null || view.n >= ROW_SPAN || !view.rowsPlain()) return flatOf(e);
  const body = view.encodedBody();
  const rc = body === null ? view.rowColumns() : null;
  let at = st.b.length - 1;
  let kb = st.b[at];
  if (kb === undefined || (body !== null ? kb.e?.body !== body : kb.c !== rc)) {
    if (kb !== undefined) compact(kb);
    kb = { e: body === null ? null : { body, origin: view.origin }, c: rc, r: [], f: null };
    at = st.b.push(kb) - 1;
  }
  const row = (e as ColumnEvent).rowIndex;
  kb.r.push(row);
  return at * ROW_SPAN + row;
}

function resolve(st: KeyState, x: Kept): Flat {
  if (typeof x !== 'number') return x;
  const kb = st.b[Math.floor(x / ROW_SPAN)]!;
  const row = x % ROW_SPAN;
  const c = rowsOf(kb);
  return c !== null ? rowFlat(c, row) : kb.f!.get(row)!;
}

/** The qualifying keys (every clause matched) with their events as flat copies. */
type Qualifying = Map<string, [number, Flat[]]>;

/** A filter that only reads the event (no regex with named groups, no function): run without a copy. */
export function readsOnly(f: Filter): boolean {
  switch (f.k) {
    case 'and':
    case 'or':
      return readsOnly(f.left) && readsOnly(f.right);
    case 'not':
      return readsOnly(f.expr);
    case 'all':
    case 'text':
      return true;
    case 'compare':
      return f.value.k === 'str';
    default:
      return false;
  }
}

/** The where= clauses as tests; a clause that may change the event (it extracts fields) is given a copy. */
function whereClauses(a: BoundArgs, env: CompileEnv): ((e: Ev) => boolean)[] {
  const raw = a.raw('where')!;
  const items: Expr[] = raw.k === 'array' ? raw.items : [raw];
  if (items.length === 0 || items.length > 30) a.fail('where', `${a.def.name}: where must list 1 to 30 {filters}`);
  return items.map((it) => {
    if (it.k !== 'block') return a.env.fail(it.span, `${a.def.name}: each where clause must be a { filter }`);
    const test = env.subFilter(it.pipeline);
    const pure = it.pipeline.stages.every((st) => st.kind === 'expr' && readsOnly(st.expr));
    return pure ? test : (e: Ev) => test(e.clone());
  });
}

function keyAggregator(name: string, a: BoundArgs, env: CompileEnv, prefilter: boolean, keepEvents: (mask: number) => boolean, finish: (k: Qualifying) => Ev[]): Aggregator<KeyState> {
  const fields = a.list('field')!;
  const clauses = whereClauses(a, env);
  const full = (1 << clauses.length) - 1;
  const limit = a.number('limit', 20_000);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000_000) a.fail('limit', `${name}: limit must be a whole number from 1 to 1000000`);
  const maxEvents = env.limits.maxRows;
  const over = (what: string): never => {
    throw new LogsvcError('E_QUERY', `${name}: ${what}; narrow the query with filters before ${name}() or a shorter time range`);
  };
  // Without prefilter only the key's mask needs an event's clauses: those the key already
  // satisfies are not run again (most events of a busy key run none).
  const perEvent = prefilter;
  return {
    name,
    init: () => ({ k: new Map(), events: 0, b: [] }),
    add(st, e) {
      const k = keyOf(e, fields);
      if (k === undefined) return;
      const key = keyText(k);
      let cur = st.k.get(key);
      if (cur === undefined) {
        if (st.k.size >= limit) over(`more than ${limit} distinct keys (the limit parameter)`);
        cur = [0, []];
        st.k.set(key, cur);
      }
      let mask = 0;
      const known = perEvent ? 0 : cur[0];
      for (let i = 0; i < clauses.length; i++) {
        const bit = 1 << i;
        if ((known & bit) === 0 && clauses[i]!(e)) mask |= bit;
      }
      cur[0] |= mask;
      if (keepEvents(mask)) {
        if (++st.events > maxEvents) over(`more than ${maxEvents} events to keep (query.max_rows)`);
        cur[1].push(keepRow(st, e));
      }
    },
    merge(into, o) {
      // The other state's blocks go after this one's: its references move by that many blocks.
      const shift = into.b.length * ROW_SPAN;
      const last = into.b[into.b.length - 1];
      if (last !== undefined) compact(last);
      for (const kb of o.b) {
        compact(kb);
        into.b.push(kb);
      }
      for (const [key, [mask, evs]] of o.k) {
        let cur = into.k.get(key);
        if (cur === undefined) {
          if (into.k.size >= limit) over(`more than ${limit} distinct keys (the limit parameter)`);
          cur = [0, []];
          into.k.set(key, cur);
        }
        cur[0] |= mask;
        into.events += evs.length;
        if (into.events > maxEvents) over(`more than ${maxEvents} events to keep (query.max_rows)`);
        for (const x of evs) cur[1].push(typeof x === 'number' ? x + shift : x);
      }
    },
    finish(st) {
      const q: Qualifying = new Map();
      for (const [key, [mask, evs]] of st.k) if (mask === full) q.set(key, [mask, evs.map((x) => resolve(st, x))]);
      return finish(q);
    },
  };
}

/** Events newest first, ties by content: the same order however the events were split. */
function byTime(rows: Flat[]): Ev[] {
  const keyed = rows.map((f) => ({ t: Number(flatGet(f, '@timestamp') ?? NaN) || 0, f, j: '' }));
  // The content text only for ties (rare): most comparisons are one subtraction.
  const text = (x: { f: Flat; j: string }): string => (x.j === '' ? (x.j = JSON.stringify(x.f)) : x.j);
  keyed.sort((x, y) => {
    if (x.t !== y.t) return y.t - x.t;
    const a = text(x);
    const b = text(y);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return keyed.map((x) => row(flatPairs(x.f)));
}

const WHERE_PARAMS = [
  { name: 'field', type: 'fields' as const, unnamed: true, required: true },
  { name: 'where', type: 'expr' as const, required: true },
  { name: 'prefilter', type: 'bool' as const, default: 'false' },
];

const selfJoinFilter: FnDef = {
  name: 'selfJoinFilter',
  params: [...WHERE_PARAMS, { name: 'limit', type: 'number', default: '20000' }],
  agg(a, env) {
    const prefilter = a.bool('prefilter', false);
    const agg = keyAggregator('selfJoinFilter', a, env, prefilter, (mask) => !prefilter || mask !== 0, (q) => byTime([...q.values()].flatMap(([, evs]) => evs)));
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

/** selfJoin: one row per qualifying key, with the key fields and the collected fields' distinct values. */
const selfJoin: FnDef = {
  name: 'selfJoin',
  params: [
    ...WHERE_PARAMS,
    { name: 'collect', type: 'fields' },
    { name: 'select', type: 'fields' },
    { name: 'limit', type: 'number', default: '20000' },
    { name: 'postfilter', type: 'bool', default: 'false' },
  ],
  agg(a, env) {
    const fields = a.list('field')!;
    const collect = a.list('collect') ?? [];
    const select = a.list('select');
    const prefilter = a.bool('prefilter', false);
    const postfilter = a.bool('postfilter', false);
    const keep = collect.length > 0 || select !== undefined || postfilter;
    const agg = keyAggregator('selfJoin', a, env, prefilter, (mask) => keep && (!prefilter || mask !== 0), (q) => {
      const out: Ev[] = [];
      const keys = [...q.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
      for (const [key, [, evs]] of keys) {
        if (select !== undefined || postfilter) {
          for (const ev of byTime(evs)) {
            if (select === undefined) out.push(ev);
            else out.push(row(pairsOf(ev).filter(([n]) => select.includes(n) || fields.includes(n))));
          }
          continue;
        }
        const k: string[] = fields.length === 1 ? [key] : (JSON.parse(key) as string[]);
        const pairs: [string, string][] = fields.map((f, i) => [f, k[i]!]);
        for (const c of collect) {
          const vals = [...new Set(evs.map((p) => flatGet(p, c)).filter((v): v is string => v !== undefined))].sort();
          if (vals.length > 0) pairs.push([c, vals.join('\n')]);
        }
        out.push(row(pairs));
      }
      return out;
    });
    return { agg, outputs: select === undefined && !postfilter ? [...fields, ...collect] : null, oneRow: false };
  },
};

export const correlationFunctions: FnDef[] = [join, defineTable, setTimeInterval, readFile, selfJoin, selfJoinFilter];
