/**
 * Finding the rows of a packed table that match an event, for match() and lookup(): exact keys
 * (one or several columns, optionally case-insensitive) through an open-addressing hash index,
 * `*`-glob patterns by testing the rows in order, and CIDR subnets through one hash map per prefix
 * length. Indexes are built lazily, on the thread that first needs them, from the shared table
 * bytes; they hold only row numbers, so a thread's copy of a 1,000,000-row index is ~12 MB while
 * the values stay in the one shared buffer.
 *
 * Which rows match, in the product's order (library.humio.com functions-match; api-facts is silent
 * on it): exact keys give the LAST matching row, and with nrows the latest rows, newest first; CIDR
 * gives the most specific subnet first (longest prefix; among equal prefixes the latest row); glob
 * gives its matches ordered by pattern text (then latest row first). Glob patterns are anchored:
 * a row matches a substring only with `*` at both ends, as the product's examples write them.
 */
import { foldUnit } from '../query/casefold.js';
import { parseIp } from '../query/functions/logic.js';
import { compileWildcard } from '../query/wildcard.js';
import { tableKey, viewsOf, type PackedTable, type TableViews } from './packed.js';

/** Row numbers of the first `limit` matching rows, in the product's order (see above). */
export type RowFinder = (values: readonly string[], limit: number) => number[];

/** Indexes one thread keeps (a few tables, each with a few key columns). */
const MAX_CACHED = 32;
const cache = new Map<string, RowFinder>();

function cached(key: string, build: () => RowFinder): RowFinder {
  let f = cache.get(key);
  if (f === undefined) {
    f = build();
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, f);
  }
  return f;
}

export function exactFinder(t: PackedTable, cols: readonly number[], ignoreCase: boolean): RowFinder {
  return cached(`${tableKey(t)}|x|${cols.join(',')}|${ignoreCase}`, () => buildExact(viewsOf(t), cols, ignoreCase));
}

export function globFinder(t: PackedTable, col: number, ignoreCase: boolean): RowFinder {
  return cached(`${tableKey(t)}|g|${col}|${ignoreCase}`, () => buildGlob(viewsOf(t), col, ignoreCase));
}

export function cidrFinder(t: PackedTable, col: number): RowFinder {
  return cached(`${tableKey(t)}|c|${col}`, () => buildCidr(viewsOf(t), col));
}

// --- exact --------------------------------------------------------------------------------------

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Mixed in between the columns of a composite key. */
const SEPARATOR = 0xffff;

function buildExact(v: TableViews, cols: readonly number[], ignoreCase: boolean): RowFinder {
  const { offsets, absent, heap, nCols } = v;
  const n = v.t.nRows;
  const unit = ignoreCase ? foldUnit : (c: number): number => c;
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  const mask = cap - 1;
  /** Slot -> first row (+1) of the distinct key stored there; 0 = empty. */
  const slots = new Int32Array(cap);
  /** Row -> the next row with the same key, -1 at the end. */
  const next = new Int32Array(n).fill(-1);

  const rowHash = (r: number): number => {
    let h = FNV_OFFSET;
    for (const col of cols) {
      const c = r * nCols + col;
      for (let i = offsets[c]!, end = offsets[c + 1]!; i < end; i++) h = Math.imul(h ^ unit(heap[i]!), FNV_PRIME);
      h = Math.imul(h ^ SEPARATOR, FNV_PRIME);
    }
    return h >>> 0;
  };
  const rowsEqual = (a: number, b: number): boolean => {
    for (const col of cols) {
      const ca = a * nCols + col;
      const cb = b * nCols + col;
      const la = offsets[ca + 1]! - offsets[ca]!;
      if (la !== offsets[cb + 1]! - offsets[cb]!) return false;
      for (let i = 0, ia = offsets[ca]!, ib = offsets[cb]!; i < la; i++) if (unit(heap[ia + i]!) !== unit(heap[ib + i]!)) return false;
    }
    return true;
  };
  const hasKey = (r: number): boolean => cols.every((col) => absent[r * nCols + col] === 0);

  // Rows are inserted first to last, each in front of its key's chain: a chain starts with the
  // key's last row and goes back through the file (the product's latest-first order).
  for (let r = 0; r < n; r++) {
    if (!hasKey(r)) continue;
    let s = rowHash(r) & mask;
    for (;;) {
      const at = slots[s]!;
      if (at === 0) {
        slots[s] = r + 1;
        break;
      }
      if (rowsEqual(at - 1, r)) {
        next[r] = at - 1;
        slots[s] = r + 1;
        break;
      }
      s = (s + 1) & mask;
    }
  }

  const valueHash = (values: readonly string[]): number => {
    let h = FNV_OFFSET;
    for (const s of values) {
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ unit(s.charCodeAt(i)), FNV_PRIME);
      h = Math.imul(h ^ SEPARATOR, FNV_PRIME);
    }
    return h >>> 0;
  };
  const equalsValues = (r: number, values: readonly string[]): boolean => {
    for (let k = 0; k < cols.length; k++) {
      const s = values[k]!;
      const c = r * nCols + cols[k]!;
      const a = offsets[c]!;
      if (offsets[c + 1]! - a !== s.length) return false;
      for (let i = 0; i < s.length; i++) if (unit(heap[a + i]!) !== unit(s.charCodeAt(i))) return false;
    }
    return true;
  };
  return (values, limit) => {
    let s = valueHash(values) & mask;
    for (;;) {
      const at = slots[s]!;
      if (at === 0) return [];
      if (equalsValues(at - 1, values)) {
        const out: number[] = [];
        for (let r = at - 1; r >= 0 && out.length < limit; r = next[r]!) out.push(r);
        return out;
      }
      s = (s + 1) & mask;
    }
  };
}

// --- glob ---------------------------------------------------------------------------------------

function cellAt(v: TableViews, r: number, col: number): string | null {
  const c = r * v.nCols + col;
  if (v.absent[c] === 1) return null;
  let s = '';
  for (let i = v.offsets[c]!, end = v.offsets[c + 1]!; i < end; i++) s += String.fromCharCode(v.heap[i]!);
  return s;
}

function buildGlob(v: TableViews, col: number, ignoreCase: boolean): RowFinder {
  const tests: { row: number; pattern: string; test: (s: string) => boolean }[] = [];
  for (let r = 0; r < v.t.nRows; r++) {
    const p = cellAt(v, r, col);
    if (p !== null) tests.push({ row: r, pattern: p, test: compileWildcard(p, { anchored: true, ignoreCase }) });
  }
  // Kept in the order matches are reported (pattern text, then latest row first), so the first
  // `limit` matches found are the answer. At most GLOB_MATCH_LIMIT rows.
  tests.sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : b.row - a.row));
  return (values, limit) => {
    const s = values[0]!;
    const out: number[] = [];
    for (const t of tests) {
      if (t.test(s)) {
        out.push(t.row);
        if (out.length >= limit) break;
      }
    }
    return out;
  };
}

// --- cidr ---------------------------------------------------------------------------------------

interface NetTable {
  width: 32 | 128;
  /** Prefix length (longest first) -> network (address >> host bits, as text) -> rows, latest first. */
  byLength: Map<number, Map<string, number[]>>;
}

function buildCidr(v: TableViews, col: number): RowFinder {
  const tables: Record<32 | 128, NetTable> = { 32: { width: 32, byLength: new Map() }, 128: { width: 128, byLength: new Map() } };
  for (let r = 0; r < v.t.nRows; r++) {
    const text = cellAt(v, r, col);
    if (text === null) continue;
    const [addr, len] = text.trim().split('/');
    const ip = parseIp(addr ?? '');
    if (ip === null) continue;
    const bits = len === undefined ? ip.bits : Number(len);
    // Rows that hold no subnet cannot match anything; they are left out rather than failing queries.
    if (!Number.isInteger(bits) || bits < 0 || bits > ip.bits) continue;
    const nets = tables[ip.bits].byLength;
    let m = nets.get(bits);
    if (m === undefined) nets.set(bits, (m = new Map()));
    const key = (ip.v >> BigInt(ip.bits - bits)).toString(36);
    const rows = m.get(key);
    if (rows === undefined) m.set(key, [r]);
    else rows.push(r);
  }
  // Most specific subnet first; each network's rows latest first.
  for (const t of Object.values(tables)) {
    t.byLength = new Map([...t.byLength].sort(([a], [b]) => b - a));
    for (const m of t.byLength.values()) for (const rows of m.values()) rows.reverse();
  }
  return (values, limit) => {
    const ip = parseIp(values[0]!);
    if (ip === null) return [];
    const out: number[] = [];
    for (const [bits, m] of tables[ip.bits].byLength) {
      const rows = m.get((ip.v >> BigInt(ip.bits - bits)).toString(36));
      if (rows === undefined) continue;
      for (const r of rows) {
        out.push(r);
        if (out.length >= limit) return out;
      }
    }
    return out;
  };
}
