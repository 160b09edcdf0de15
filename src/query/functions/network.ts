/**
 * Network and geo functions (query-functions.md §1): subnet, ipLocation, asn, geohash, worldMap,
 * ioc:lookup. Location, AS and IOC data cannot ship with logsvc: they are read from CSV files named
 * by the config (query.geoip_file: network,country,city,lat,lon; query.asn_file: network,asn,org;
 * query.ioc_file: indicator,type,malicious_confidence,labels,published_date,last_updated). A query
 * using one without its file fails to compile, naming the setting. A file is read once per thread
 * (synchronously, at most MAX_DATA_FILE_BYTES) and kept while its size and modification time stay.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseTable } from '../../files/parse.js';
import { ColumnEvent, type BlockView } from '../block-view.js';
import type { Aggregator, DataFiles, Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import { addToGroup, groupedAggregator, statsOf, type GroupState } from './aggregates.js';
import type { BoundArgs } from './args.js';
import { argValue, oneOf, valueDef } from './define.js';
import { ipv4Number, parseIp } from './logic.js';
import type { CompileEnv, FnDef } from './types.js';

export const MAX_DATA_FILE_BYTES = 512 * 1024 * 1024;
const MAX_DATA_ROWS = 20_000_000;

// --- range tables ---------------------------------------------------------------------------------

interface RangeTable {
  /**
   * Per address width: [first, last, row] by first address, the wider of two with the same first
   * address before the narrower (networks nest or are apart, so this is the order of a walk down
   * the nesting), and `up`: for each, the index of the innermost network around it, or -1.
   */
  v4: [bigint, bigint, number][];
  v6: [bigint, bigint, number][];
  v6up: Int32Array;
  /** v4 again as numbers (every IPv4 address is exact in a double): the per-event search. */
  v4n: { first: Float64Array; last: Float64Array; row: Int32Array; up: Int32Array };
  /**
   * Direct-mapped memo of IPv4 answers: slot (a hash of the address) -> address and row (-1: no
   * network). Addresses repeat (clients, servers); a numeric slot costs no string hashing, which a
   * Map keyed by the text did on every event (the text is new per block).
   */
  memoAddr: Float64Array;
  memoRow: Int32Array;
  /** The same for other addresses (IPv6, forms parseIp accepts): text -> row (-1: none). */
  memoText: Map<string, number>;
  columns: string[];
  rows: (string | null)[][];
}

const MEMO_BITS = 14;

const tableCache = new Map<string, { stamp: string; table: RangeTable }>();

function loadRanges(path: string, setting: string, fail: (m: string) => never): RangeTable {
  let stamp: string;
  try {
    const st = statSync(path);
    if (st.size > MAX_DATA_FILE_BYTES) return fail(`${setting} ${path} is ${st.size} bytes, more than ${MAX_DATA_FILE_BYTES}`);
    stamp = `${st.size}:${st.mtimeMs}`;
  } catch (err) {
    return fail(`cannot read ${setting} ${path}: ${(err as Error).message}`);
  }
  const hit = tableCache.get(path);
  if (hit !== undefined && hit.stamp === stamp) return hit.table;
  let parsed;
  try {
    parsed = parseTable(readFileSync(path), 'csv', { maxRows: MAX_DATA_ROWS });
  } catch (err) {
    return fail(`cannot read ${setting} ${path}: ${(err as Error).message}`);
  }
  const net = parsed.columns.indexOf('network');
  if (net < 0) return fail(`${setting} ${path} has no "network" column`);
  const table: RangeTable = {
    v4: [],
    v6: [],
    v6up: new Int32Array(0),
    v4n: { first: new Float64Array(0), last: new Float64Array(0), row: new Int32Array(0), up: new Int32Array(0) },
    memoAddr: new Float64Array(1 << MEMO_BITS).fill(-1),
    memoRow: new Int32Array(1 << MEMO_BITS),
    memoText: new Map(),
    columns: parsed.columns,
    rows: parsed.rows,
  };
  parsed.rows.forEach((r, i) => {
    const cell = r[net];
    if (cell === null || cell === undefined) return;
    const [addr, len] = cell.split('/');
    const ip = parseIp(addr ?? '');
    if (ip === null) return;
    const bits = len === undefined ? ip.bits : Number(len);
    if (!Number.isInteger(bits) || bits < 0 || bits > ip.bits) return;
    const host = BigInt(ip.bits - bits);
    const first = (ip.v >> host) << host;
    const last = first | ((1n << host) - 1n);
    (ip.bits === 32 ? table.v4 : table.v6).push([first, last, i]);
  });
  // The wider first among equal starts (the same network twice: file order, the later wins).
  for (const list of [table.v4, table.v6]) list.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] > y[1] ? -1 : x[1] < y[1] ? 1 : 0));
  table.v6up = enclosing(table.v6);
  table.v4n = {
    first: Float64Array.from(table.v4, (x) => Number(x[0])),
    last: Float64Array.from(table.v4, (x) => Number(x[1])),
    row: Int32Array.from(table.v4, (x) => x[2]),
    up: enclosing(table.v4),
  };
  if (tableCache.size >= 8) tableCache.clear();
  tableCache.set(path, { stamp, table });
  return table;
}

/**
 * For each network of a list in RangeTable order, the index of the innermost network around it
 * (-1: none): the open networks form a stack, and those that end before a network starts close.
 */
function enclosing(list: readonly [bigint, bigint, number][]): Int32Array {
  const up = new Int32Array(list.length);
  const open: number[] = [];
  for (let i = 0; i < list.length; i++) {
    while (open.length > 0 && list[open[open.length - 1]!]![1] < list[i]![0]) open.pop();
    up[i] = open.length > 0 ? open[open.length - 1]! : -1;
    open.push(i);
  }
  return up;
}

/** The row of the most specific network holding the address `text`, or undefined. */
function findRow(t: RangeTable, text: string): (string | null)[] | undefined {
  const at = rowIndexOf(t, text);
  return at < 0 ? undefined : t.rows[at];
}

/** The index of the row of the most specific network holding the address `text`, or -1. */
function rowIndexOf(t: RangeTable, text: string): number {
  const n = ipv4Number(text);
  return n >= 0 ? v4RowOf(t, n) : otherRowOf(t, text);
}

/** The row index for a plain IPv4 address as a number, or -1: memo, else a search of the numeric copy. */
function v4RowOf(t: RangeTable, n: number): number {
  const slot = Math.imul(n | 0, 0x9e3779b1) >>> (32 - MEMO_BITS);
  if (t.memoAddr[slot] === n) return t.memoRow[slot]!;
  // The last network starting at or below n, then out through the networks around it until one
  // reaches n: the innermost holding n (a network holding n holds the last one starting by n).
  const { first, last, row, up } = t.v4n;
  let lo = 0;
  let hi = first.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (first[mid]! <= n) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  while (at >= 0 && last[at]! < n) at = up[at]!;
  const found = at < 0 ? -1 : row[at]!;
  t.memoAddr[slot] = n;
  t.memoRow[slot] = found;
  return found;
}

/** The row index for any other address text parseIp accepts (IPv6 among them), or -1. */
function otherRowOf(t: RangeTable, text: string): number {
  const hit = t.memoText.get(text);
  if (hit !== undefined) return hit;
  let found = -1;
  const ip = parseIp(text);
  if (ip !== null) {
    const list = ip.bits === 32 ? t.v4 : t.v6;
    let lo = 0;
    let hi = list.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]![0] <= ip.v) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const up = ip.bits === 32 ? t.v4n.up : t.v6up;
    while (at >= 0 && list[at]![1] < ip.v) at = up[at]!;
    if (at >= 0) found = list[at]![2];
  }
  if (t.memoText.size >= 1 << MEMO_BITS) t.memoText.clear();
  t.memoText.set(text, found);
  return found;
}

function dataFile(env: CompileEnv, a: BoundArgs, key: keyof DataFiles, setting: string): RangeTable {
  const path = env.ctx.dataFiles?.[key];
  if (path === undefined || path === '') {
    return a.env.fail(a.call.span, `function ${a.def.name} needs ${setting}: no such data file is configured on this node (set ${setting} in the config to a CSV file)`);
  }
  return loadRanges(path, setting, (m) => a.env.fail(a.call.span, `function ${a.def.name}: ${m}`));
}

function cellOf(t: RangeTable, r: (string | null)[], column: string): string | undefined {
  const i = t.columns.indexOf(column);
  const v = i < 0 ? null : r[i];
  return v === null || v === undefined || v === '' ? undefined : v;
}

// --- functions --------------------------------------------------------------------------------------

const subnet = valueDef(
  'subnet',
  [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'bits', type: 'number', required: true },
  ],
  '_subnet',
  (a) => {
    const v = argValue(a, 'field');
    const bits = a.number('bits')!;
    if (!Number.isInteger(bits) || bits < 0 || bits > 32) a.fail('bits', 'subnet: bits must be a whole number from 0 to 32');
    return (e) => {
      const ip = parseIp(v(e) ?? '');
      if (ip === null || ip.bits !== 32) return undefined;
      const host = BigInt(32 - bits);
      const n = (ip.v >> host) << host;
      return `${[24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.')}/${bits}`;
    };
  },
);

/**
 * A field of stored rows read as an IPv4 address number straight from an IPv4-typed column
 * (segments: four bytes per row, every row an address; the text get() gives is their dotted
 * quad), so the column is neither decoded to text nor parsed. The column is found once per block.
 */
class TypedAddress {
  private view: BlockView | null = null;
  private bytes: Uint8Array | null = null;
  /** A stored field's name (get() answers `@` and `#` names otherwise). */
  private readonly stored: boolean;

  constructor(private readonly field: string) {
    this.stored = field.charCodeAt(0) !== 64 /* @ */ && field.charCodeAt(0) !== 35; /* # */
  }

  /** The address as a number when `e` is an unchanged stored row of a block whose column is IPv4-typed; else -1 (read the text). */
  of(e: Ev): number {
    if (!this.stored || !(e instanceof ColumnEvent)) return -1;
    const view = e.storedView();
    if (view === null) return -1;
    if (view !== this.view) {
      this.view = view;
      this.bytes = view.ipv4(this.field);
    }
    const b = this.bytes;
    if (b === null) return -1;
    const o = e.rowIndex * 4;
    return b[o]! * 16777216 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
  }
}

/**
 * ipLocation / asn: `<as>.<column>` for each of `columns` from the data file's row for the
 * address in `field` (default ip; `as` defaults to the field name).
 */
function enrich(name: string, key: keyof DataFiles, setting: string, columns: string[]): FnDef {
  return {
    name,
    params: [
      { name: 'field', type: 'field', unnamed: true, default: 'ip' },
      { name: 'as', type: 'string', default: '(the input field)' },
    ],
    stage(a, env) {
      const t = dataFile(env, a, key, setting);
      const field = a.string('field', 'ip');
      const prefix = a.string('as', field);
      // Column positions and output names once, not per event.
      const at = columns.map((c) => t.columns.indexOf(c));
      const names = columns.map((c) => `${prefix}.${c}`);
      const typed = new TypedAddress(field);
      return {
        run(e, emit) {
          const n = typed.of(e);
          let found: number;
          if (n >= 0) found = v4RowOf(t, n);
          else {
            const v = e.get(field);
            found = v === undefined ? -1 : rowIndexOf(t, v);
          }
          const r = found < 0 ? undefined : t.rows[found];
          if (r !== undefined) {
            for (let i = 0; i < at.length; i++) {
              const x = at[i]! < 0 ? null : r[at[i]!];
              if (x !== null && x !== undefined && x !== '') e.set(names[i]!, x);
            }
          }
          emit(e);
        },
      };
    },
  };
}

const ipLocation = enrich('ipLocation', 'geoip', 'query.geoip_file', ['country', 'city', 'lon', 'lat']);
const asn = enrich('asn', 'asn', 'query.asn_file', ['asn', 'org']);

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz';

/** The geohash of (lat, lon) with `precision` characters (1–12). */
export function geohashOf(lat: number, lon: number, precision: number): string {
  let latLo = -90;
  let latHi = 90;
  let lonLo = -180;
  let lonHi = 180;
  let out = '';
  let bit = 0;
  let ch = 0;
  let even = true;
  while (out.length < precision) {
    if (even) {
      const mid = (lonLo + lonHi) / 2;
      if (lon >= mid) {
        ch = (ch << 1) | 1;
        lonLo = mid;
      } else {
        ch <<= 1;
        lonHi = mid;
      }
    } else {
      const mid = (latLo + latHi) / 2;
      if (lat >= mid) {
        ch = (ch << 1) | 1;
        latLo = mid;
      } else {
        ch <<= 1;
        latHi = mid;
      }
    }
    even = !even;
    if (++bit === 5) {
      out += BASE32[ch];
      bit = 0;
      ch = 0;
    }
  }
  return out;
}

function precisionOf(a: BoundArgs, def: number): number {
  const p = a.number('precision', def);
  if (!Number.isInteger(p) || p < 1 || p > 12) a.fail('precision', `${a.def.name}: precision must be a whole number from 1 to 12`);
  return p;
}

const geohash = valueDef(
  'geohash',
  [
    { name: 'lat', type: 'field', default: 'ip.lat' },
    { name: 'lon', type: 'field', default: 'ip.lon' },
    { name: 'precision', type: 'number', default: '12' },
  ],
  '_geohash',
  (a) => {
    const lat = a.string('lat', 'ip.lat');
    const lon = a.string('lon', 'ip.lon');
    const p = precisionOf(a, 12);
    return (e) => {
      const y = parseNumber(e.get(lat));
      const x = parseNumber(e.get(lon));
      if (y === undefined || x === undefined || Math.abs(y) > 90 || Math.abs(x) > 180) return undefined;
      return geohashOf(y, x, p);
    };
  },
);

/** worldMap: geohash cells (of lat/lon, or of ip= through query.geoip_file) with a magnitude. */
const worldMap: FnDef = {
  name: 'worldMap',
  params: [
    { name: 'ip', type: 'field' },
    { name: 'lat', type: 'field' },
    { name: 'lon', type: 'field' },
    { name: 'magnitude', type: 'aggs', default: 'count(as=_count)' },
    { name: 'precision', type: 'number', default: '4' },
  ],
  agg(a, env) {
    const p = precisionOf(a, 4);
    // locate() writes an event's latitude and longitude here (no array per event) or says there are none.
    const at = new Float64Array(2);
    let locate: (e: Ev) => boolean;
    const ip = a.string('ip');
    if (ip !== undefined) {
      const t = dataFile(env, a, 'geoip', 'query.geoip_file');
      locate = (e) => {
        const v = e.get(ip);
        const r = v === undefined ? undefined : findRow(t, v);
        if (r === undefined) return false;
        const y = parseNumber(cellOf(t, r, 'lat'));
        const x = parseNumber(cellOf(t, r, 'lon'));
        if (y === undefined || x === undefined) return false;
        at[0] = y;
        at[1] = x;
        return true;
      };
    } else {
      const lat = a.string('lat') ?? a.fail('lat', 'worldMap: give ip=, or lat= and lon=');
      const lon = a.string('lon') ?? a.fail('lon', 'worldMap: give ip=, or lat= and lon=');
      locate = (e) => {
        const y = parseNumber(e.get(lat));
        const x = parseNumber(e.get(lon));
        if (y === undefined || x === undefined) return false;
        at[0] = y;
        at[1] = x;
        return true;
      };
    }
    const specs = a.aggs('magnitude') ?? [env.aggCall({ name: 'count', args: [], span: a.call.span })];
    const sub = statsOf(specs, a.span('magnitude'), env);
    const cap = env.limits.maxGroups;
    const grouped = groupedAggregator('worldMap', ['_geohash'], sub.agg, cap, 'query.max_groups');
    // The cell is the group's key, and finish() writes it into every row. An event needs a copy
    // with `_geohash` set only when the magnitude may read that field; otherwise the event goes to
    // its cell's sub-aggregate as it is (a copy per event was most of worldMap's cost over groupBy's).
    const magnitude = a.call.args.find((g) => g.name === 'magnitude');
    const readsCell = magnitude !== undefined && JSON.stringify(magnitude.value).includes('_geohash');
    // Not `...grouped`: its column paths (a tally of a stored `_geohash` column) would answer for
    // a field no stored event has, and did: worldMap gave no cells where a scan took them.
    const agg: Aggregator<unknown> = {
      name: grouped.name,
      init: grouped.init,
      merge: grouped.merge,
      finish: grouped.finish,
      warnings: grouped.warnings,
      add(st, e) {
        if (!locate(e) || Math.abs(at[0]!) > 90 || Math.abs(at[1]!) > 180) return;
        const key = geohashOf(at[0]!, at[1]!, p);
        if (readsCell) {
          const cell = e.clone();
          cell.set('_geohash', key);
          grouped.add(st as never, cell);
        } else addToGroup(st as GroupState, key, cap, sub.agg, e, () => ({ k: [key], s: sub.agg.init() }));
      },
    } as Aggregator<unknown>;
    return { agg, outputs: sub.outputs === null ? null : ['_geohash', ...sub.outputs], oneRow: false };
  },
};

/** An IPv4 address number as its dotted quad. */
function dottedQuad(a: number): string {
  return `${Math.floor(a / 16777216)}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
}

const IOC_TYPES = ['domain', 'ip_address', 'url'] as const;
const CONFIDENCE = ['unverified', 'low', 'medium', 'high'] as const;

const iocLookup: FnDef = {
  name: 'ioc:lookup',
  params: [
    { name: 'field', type: 'fields', unnamed: true, required: true },
    { name: 'type', type: 'string', required: true },
    { name: 'confidenceThreshold', type: 'string', default: 'high' },
    { name: 'include', type: 'strings' },
    { name: 'prefix', type: 'string', default: 'ioc' },
    { name: 'strict', type: 'bool', default: 'false' },
  ],
  stage(a, env) {
    const path = env.ctx.dataFiles?.ioc;
    if (path === undefined || path === '') {
      return a.env.fail(a.call.span, 'function ioc:lookup needs query.ioc_file: no IOC data file is configured on this node (set query.ioc_file in the config to a CSV file)');
    }
    const fields = a.list('field')!;
    const type = oneOf(a, 'type', IOC_TYPES, 'ip_address');
    const threshold = CONFIDENCE.indexOf(oneOf(a, 'confidenceThreshold', CONFIDENCE, 'high'));
    const prefix = a.string('prefix', 'ioc');
    const strict = a.bool('strict', false);
    const index = iocIndex(path, (m) => a.env.fail(a.call.span, `function ioc:lookup: ${m}`));
    const include = a.list('include') ?? index.columns.filter((c) => c !== 'indicator' && c !== 'type');
    const fold = type === 'ip_address' ? (s: string) => s : (s: string) => s.toLowerCase();
    // One map per indicator type, keyed by the folded indicator itself: no key text is built per
    // event (a `${type}\0${value}` key was a new string to hash on every event).
    const byKey = index.byType.get(type);
    // IP addresses of stored rows read as numbers (TypedAddress), looked up among the indicators
    // written as plain dotted quads: the only texts a typed column holds.
    const typed = type === 'ip_address' ? fields.map((f) => new TypedAddress(f)) : null;
    // Output names once: `<prefix>[n].<column>` for the n-th hit among the fields.
    const names = fields.map((_, n) => include.map((c) => `${prefix}[${n}].${c}`));
    const detected = `${prefix}.detected`;
    return {
      run(e, emit) {
        let n = 0;
        if (byKey !== undefined) {
          for (let k = 0; k < fields.length; k++) {
            const a = typed === null ? -1 : typed[k]!.of(e);
            let hit: IocHit | undefined;
            if (a >= 0) hit = index.v4.get(a);
            else {
              const v = e.get(fields[k]!);
              if (v === undefined) continue;
              hit = byKey.get(fold(v));
            }
            if (hit === undefined || hit.confidence < threshold) continue;
            const out = names[n]!;
            for (let i = 0; i < include.length; i++) {
              const x = hit.row[include[i]!];
              if (x !== undefined) e.set(out[i]!, x);
            }
            n++;
          }
        }
        if (n > 0) e.set(detected, 'true');
        if (n > 0 || !strict) emit(e);
      },
    };
  },
};

/** An IOC file's row, with its confidence as an index into CONFIDENCE (read once, not per event). */
interface IocHit {
  row: Record<string, string>;
  confidence: number;
}

interface IocIndex {
  columns: string[];
  /** type -> indicator (lower-cased, except IP addresses) -> row. */
  byType: Map<string, Map<string, IocHit>>;
  /** The ip_address indicators written as plain dotted quads, by address number. */
  v4: Map<number, IocHit>;
}

const iocCache = new Map<string, IocIndex & { stamp: string }>();

function iocIndex(path: string, fail: (m: string) => never): IocIndex {
  let stamp: string;
  try {
    const st = statSync(path);
    if (st.size > MAX_DATA_FILE_BYTES) return fail(`query.ioc_file ${path} is ${st.size} bytes, more than ${MAX_DATA_FILE_BYTES}`);
    stamp = `${st.size}:${st.mtimeMs}`;
  } catch (err) {
    return fail(`cannot read query.ioc_file ${path}: ${(err as Error).message}`);
  }
  const hit = iocCache.get(path);
  if (hit !== undefined && hit.stamp === stamp) return hit;
  let parsed;
  try {
    parsed = parseTable(readFileSync(path), 'csv', { maxRows: MAX_DATA_ROWS });
  } catch (err) {
    return fail(`cannot read query.ioc_file ${path}: ${(err as Error).message}`);
  }
  const ind = parsed.columns.indexOf('indicator');
  const typ = parsed.columns.indexOf('type');
  if (ind < 0 || typ < 0) return fail(`query.ioc_file ${path} needs "indicator" and "type" columns`);
  const byType = new Map<string, Map<string, IocHit>>();
  const v4 = new Map<number, IocHit>();
  for (const r of parsed.rows) {
    const t = r[typ];
    const i = r[ind];
    if (t === null || t === undefined || i === null || i === undefined) continue;
    const rec: Record<string, string> = {};
    parsed.columns.forEach((c, k) => {
      const v = r[k];
      if (v !== null && v !== undefined && v !== '') rec[c] = v;
    });
    const confidence = CONFIDENCE.indexOf((rec['malicious_confidence'] ?? 'unverified').toLowerCase() as (typeof CONFIDENCE)[number]);
    let m = byType.get(t);
    if (m === undefined) byType.set(t, (m = new Map()));
    const hit = { row: rec, confidence };
    m.set(t === 'ip_address' ? i : i.toLowerCase(), hit);
    if (t === 'ip_address') {
      const a = ipv4Number(i);
      if (a >= 0 && dottedQuad(a) === i) v4.set(a, hit);
    }
  }
  const entry = { stamp, columns: parsed.columns, byType, v4 };
  if (iocCache.size >= 4) iocCache.clear();
  iocCache.set(path, entry);
  return entry;
}

export const networkFunctions: FnDef[] = [subnet, ipLocation, asn, geohash, worldMap, iocLookup];
