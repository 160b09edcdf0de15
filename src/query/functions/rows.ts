/**
 * Row-selecting functions: head, tail, sort and table (aggregates that keep the first N rows of an
 * order) and select (a per-event projection). The kept rows live in a bounded array that is cut
 * back to N by a total order whenever it reaches 2N, so a state never holds more than 2N rows and
 * merges give the same rows in any order (ties are broken by the row's contents: the fields the
 * row is output with, which for table() are its listed fields).
 */
import { chargeKept, pairsBytes, releaseKept } from '../memory.js';
import type { Aggregator, Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { pairsKey, pairsOf, row } from './common.js';
import type { AggSpec, CompileEnv, FnDef } from './types.js';

/** One kept row: its sort values, an arrival number (for rows without timestamps) and its fields. */
interface Item {
  v: (string | null)[];
  q: number;
  f: [string, string][];
  /** Estimated bytes, charged to the query's memory budget while the row is kept. */
  z: number;
  /** The tie-break text of `f` (pairsKey), kept from the first tie the row takes part in when short. */
  j: string | null;
  /** The sort values as an order compares them (fieldOrder), made on the row's first comparison. */
  k: Prepared | null;
}

interface KeepState {
  items: Item[];
  seq: number;
  /** After a cut: the last row kept. A new row ordered strictly after it can be skipped unread. */
  w: Item | null;
  /** Estimated bytes of the rows added since the last cut. */
  b: number;
}

/** Rows past N are also cut once those added since the last cut hold this much (large rows). */
const TRIM_BYTES = 4 * 1024 * 1024;

type ItemOrder = (a: Item, b: Item) => number;

function trim(st: KeepState, n: number, order: ItemOrder): void {
  st.b = 0;
  st.items.sort(order);
  if (st.items.length > n) {
    let cut = 0;
    for (let i = n; i < st.items.length; i++) cut += st.items[i]!.z;
    releaseKept(cut);
    st.items.length = n;
  }
  st.w = st.items.length === n ? st.items[n - 1]! : null;
}

/**
 * An aggregate keeping the first `n` rows by `primary` (then by content), built from each event by
 * `sortValues`. An event ordered strictly after the last row kept at the previous cut is skipped
 * before its fields are read: on a scan in order (tail over the newest data first), most events
 * are never materialized.
 */
function keepFirst(
  name: string,
  n: number,
  sortValues: (e: Ev) => (string | null)[],
  primary: ItemOrder,
  output: (it: Item) => Ev,
  final: (items: Item[]) => Item[] = (items) => items,
  fieldsOf: (e: Ev) => [string, string][] = pairsOf,
): Aggregator<KeepState> {
  const order: ItemOrder = (a, b) => primary(a, b) || tieBreak(a, b);
  return {
    name,
    init: () => ({ items: [], seq: 0, w: null, b: 0 }),
    add(st, e) {
      const probe: Item = { v: sortValues(e), q: st.seq++, f: [], z: 0, j: null, k: null };
      if (st.w !== null && primary(probe, st.w) > 0) return;
      probe.f = fieldsOf(e);
      const z = pairsBytes(probe.f);
      st.items.push(probe);
      st.b += z;
      // Cut before charging, so a row cut at once (or the row it displaces) is never held twice.
      if (st.items.length >= 2 * n + 16 || (st.b > TRIM_BYTES && st.items.length > n)) {
        trim(st, n, order);
        if (st.w !== null && order(probe, st.w) > 0) return;
      }
      probe.z = z;
      chargeKept(z);
    },
    merge(into, other) {
      for (const it of other.items) {
        chargeKept(it.z);
        into.items.push(it);
        into.b += it.z;
        if (into.b > TRIM_BYTES && into.items.length > n) trim(into, n, order);
      }
      into.seq = Math.max(into.seq, other.seq);
      if (into.items.length >= 2 * n + 16) trim(into, n, order);
    },
    finish(st) {
      trim(st, n, order);
      return final(st.items).map(output);
    },
  };
}

const asRow = (it: Item): Ev => row(it.f);

/** A row's content text longer than this is made again on each tie instead of kept (it is not charged to the budget). */
const MAX_KEPT_TIE_TEXT = 1024;

function tieText(it: Item): string {
  if (it.j !== null) return it.j;
  const k = pairsKey(it.f);
  if (k.length <= MAX_KEPT_TIE_TEXT) it.j = k;
  return k;
}

/** Tie-break making the order total: contents, then arrival. A short row's content text is made once. */
function tieBreak(a: Item, b: Item): number {
  const x = tieText(a);
  const y = tieText(b);
  return x < y ? -1 : x > y ? 1 : a.q - b.q;
}

// --- head / tail ---------------------------------------------------------------------------------

/**
 * Events are ordered by @timestamp (then @id); rows without a timestamp (after an aggregate) keep
 * their arrival order. `newestFirst`: tail (newest first), else head (oldest first).
 */
function timeOrder(newestFirst: boolean): ItemOrder {
  const dir = newestFirst ? -1 : 1;
  return (a, b) => {
    const ta = a.v[0] === null ? NaN : Number(a.v[0]);
    const tb = b.v[0] === null ? NaN : Number(b.v[0]);
    const fa = Number.isFinite(ta);
    const fb = Number.isFinite(tb);
    if (fa && fb) {
      if (ta !== tb) return (ta - tb) * dir;
      const ia = a.v[1] ?? '';
      const ib = b.v[1] ?? '';
      return ia === ib ? 0 : (ia < ib ? -1 : 1) * dir;
    }
    if (fa !== fb) return fa ? -1 : 1;
    return (a.q - b.q) * dir;
  };
}

function hasTime(it: Item): boolean {
  return it.v[0] !== null && Number.isFinite(Number(it.v[0]));
}

function headTail(name: 'head' | 'tail'): FnDef {
  return {
    name,
    params: [{ name: 'limit', type: 'limit', unnamed: true, default: '200' }],
    agg(a: BoundArgs, env: CompileEnv): AggSpec {
      const n = a.limit('limit', 200, env.limits.maxRows);
      // tail keeps rows without timestamps (after an aggregate) last-in, but prints them in arrival order.
      const final = name === 'tail' ? (items: Item[]) => [...items.filter((i) => hasTime(i)), ...items.filter((i) => !hasTime(i)).reverse()] : undefined;
      const agg = keepFirst(name, n, (e) => [e.get('@timestamp') ?? null, e.get('@id') ?? null], timeOrder(name === 'tail'), asRow, final);
      return { agg, outputs: null, oneRow: false, keepsColumns: true };
    },
  };
}

// --- sort / table --------------------------------------------------------------------------------

type SortType = 'any' | 'number' | 'string' | 'hex';
const SORT_TYPES = new Set<SortType>(['any', 'number', 'string', 'hex']);

const HEX = /^(0x)?[0-9a-f]+$/i;

function hexValue(v: string): bigint {
  return BigInt(v.startsWith('0x') || v.startsWith('0X') ? v : `0x${v}`);
}

/**
 * How one sort type orders values. A value is read once per row (`Prepared`): its rank, 0 for a
 * value of the type, 1 for one that is not (text under number/any, non-hex under hex), 2 for a
 * missing value (ranks 1 and 2 sort after rank 0 whatever the direction), and its key: the number
 * (number, any) or big integer (hex) of a rank-0 value, else the text, compared by code units.
 * `any` (table's list has it) orders as `number` does: numbers by value, then the other text.
 * One array per row, per sort field its rank then its key: `[rank0, key0, rank1, key1, ...]`.
 */
type Prepared = (number | bigint | string)[];

function prepare(v: readonly (string | null)[], types: readonly SortType[]): Prepared {
  const out: Prepared = [];
  for (let i = 0; i < types.length; i++) {
    const s = v[i] ?? null;
    if (s === null) {
      out.push(2, '');
      continue;
    }
    switch (types[i]!) {
      case 'string':
        out.push(0, s);
        break;
      case 'hex':
        if (HEX.test(s)) out.push(0, hexValue(s));
        else out.push(1, s);
        break;
      case 'number':
      case 'any': {
        const num = parseNumber(s);
        if (num === undefined) out.push(1, s);
        else out.push(0, num);
        break;
      }
    }
  }
  return out;
}

/** Rows ordered by several fields; missing values and values not of the type sort last in either direction. */
function fieldOrder(fields: string[], orders: ('asc' | 'desc')[], types: SortType[]): ItemOrder {
  const desc = orders.map((o) => o === 'desc');
  return (a, b) => {
    const pa = (a.k ??= prepare(a.v, types));
    const pb = (b.k ??= prepare(b.v, types));
    for (let i = 0; i < fields.length; i++) {
      const rx = pa[2 * i] as number;
      const ry = pb[2 * i] as number;
      if (rx === 2 || ry === 2) {
        if (rx === ry) continue;
        return rx === 2 ? 1 : -1;
      }
      if (rx !== ry) return rx - ry;
      const x = pa[2 * i + 1]!;
      const y = pb[2 * i + 1]!;
      // Rank 0 of number/any: numbers; of hex: big integers; rank 1 and string: text.
      const c = typeof x === 'number' ? x - (y as number) : x < y ? -1 : x > y ? 1 : 0;
      if (c !== 0) return desc[i] ? -c : c;
    }
    return 0;
  };
}

/** The `order` per field (one value applies to all); the deprecated `reverse` sets them all (true: desc, false: asc). */
function readOrders(a: BoundArgs, name: string, n: number, def: 'asc' | 'desc'): ('asc' | 'desc')[] {
  const given = a.list(name, []).map((o) => o.toLowerCase());
  for (const o of given) if (o !== 'asc' && o !== 'desc') a.fail(name, `parameter ${name} of function ${a.def.name} must be asc or desc, not ${o}`);
  const out: ('asc' | 'desc')[] = [];
  for (let i = 0; i < n; i++) out.push((given[i] ?? given[given.length - 1] ?? def) as 'asc' | 'desc');
  if (a.has('reverse')) return out.map(() => (a.bool('reverse', true) ? 'desc' : 'asc'));
  return out;
}

function readTypes(a: BoundArgs, n: number, def: SortType): SortType[] {
  const given = a.list('type', []).map((t) => t.toLowerCase());
  for (const t of given) if (!SORT_TYPES.has(t as SortType)) a.fail('type', `parameter type of function ${a.def.name} must be number, string, hex or any, not ${t}`);
  const out: SortType[] = [];
  for (let i = 0; i < n; i++) out.push((given[i] ?? given[given.length - 1] ?? def) as SortType);
  return out;
}

const sort: FnDef = {
  name: 'sort',
  params: [
    { name: 'field', type: 'fields', unnamed: true, default: '_count' },
    { name: 'order', type: 'strings', default: 'desc' },
    { name: 'limit', type: 'limit', default: '200' },
    { name: 'type', type: 'strings', default: 'number' },
    { name: 'reverse', type: 'bool' },
  ],
  agg(a, env) {
    const fields = a.list('field', ['_count']);
    const orders = readOrders(a, 'order', fields.length, 'desc');
    const types = readTypes(a, fields.length, 'number');
    const n = a.limit('limit', 200, env.limits.maxRows);
    const agg = keepFirst('sort', n, (e) => fields.map((f) => e.get(f) ?? null), fieldOrder(fields, orders, types), asRow);
    return { agg, outputs: null, oneRow: false, keepsColumns: true };
  },
};

const table: FnDef = {
  name: 'table',
  params: [
    { name: 'fields', type: 'fields', unnamed: true, required: true },
    { name: 'limit', type: 'limit', default: '200' },
    { name: 'sortby', type: 'fields', default: '@timestamp' },
    { name: 'order', type: 'strings', default: 'desc' },
    { name: 'type', type: 'strings', default: 'number' },
    { name: 'reverse', type: 'bool' },
  ],
  agg(a, env) {
    const fields = a.list('fields')!;
    const sortby = a.list('sortby', ['@timestamp']);
    const orders = readOrders(a, 'order', sortby.length, 'desc');
    const types = readTypes(a, sortby.length, 'number');
    const n = a.limit('limit', 200, env.limits.maxRows);
    // A row keeps only the listed fields (what the table shows), read once it is kept: its other
    // fields (@rawstring, say) are never read, and ties are broken by what the table shows.
    const listed = (e: Ev): [string, string][] => {
      const pairs: [string, string][] = [];
      for (const f of fields) {
        const v = e.get(f);
        if (v !== undefined) pairs.push([f, v]);
      }
      return pairs;
    };
    const agg = keepFirst('table', n, (e) => sortby.map((f) => e.get(f) ?? null), fieldOrder(sortby, orders, types), asRow, undefined, listed);
    return { agg, outputs: fields, oneRow: false };
  },
};

// --- select --------------------------------------------------------------------------------------

const select: FnDef = {
  name: 'select',
  params: [{ name: 'fields', type: 'fields', unnamed: true, required: true }],
  stage(a) {
    const fields = a.list('fields')!;
    const keep = new Set(fields);
    return {
      run(e, emit) {
        e.keepOnly(keep);
        emit(e);
      },
      order: () => fields,
    };
  },
};

export const rowFunctions: FnDef[] = [headTail('head'), headTail('tail'), sort, table, select];
