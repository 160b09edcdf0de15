/**
 * Column summaries (segment format 6): what a block's head says about some of its columns, so a
 * query can answer from the head alone, without reading, checking or decompressing any frame
 * (issue 19):
 *
 * - a small dictionary column's entries, with how many events hold each and how many none: the
 *   entries move here from the column's frame (the frame keeps the codes), so the block grows only
 *   by the counts;
 * - an integer column's min, max and sum (the sum only when it is exact);
 * - how many events fall in each minute (the `ts` column), for time histograms.
 *
 * Byte layout in docs/formats/segment.md. Written by frames.ts `frameBody` after the column
 * directory, parsed with it (`parseSummaries`), checked against the block's event count.
 */
import { unpack, pack } from '../lib/msgpack.js';
import { decodeNumbers, textIntValues, type NumberColumn, type StringColumn } from './columns.js';
import { utf8Interned } from './intern.js';

/** What a head says about one column. */
export type ColumnSummary =
  | { kind: 'dict'; d: string[]; counts: number[]; absent: number }
  /**
   * The integers of an integer column, or of a text column whose every value is an integer's
   * canonical text: `n` events hold one; `sum` NaN when a value or a running sum passed 2^53
   * (then it is not exact).
   */
  | { kind: 'ints'; n: number; min: number; max: number; sum: number }
  /** Events per minute from `first` (ms, a multiple of MINUTE_MS). */
  | { kind: 'minutes'; first: number; counts: number[] };

const DICT = 1;
const INTS = 2;
const MINUTES = 3;
const TEXT_INTS = 4;

/** A dictionary is summarised when it has at most this many entries ... */
export const SUMMARY_MAX_ENTRIES = 64;
/** ... of at most this many UTF-8 bytes together. */
export const SUMMARY_MAX_ENTRY_BYTES = 1024;
/** Minutes a block may span and still carry its per-minute counts. */
export const SUMMARY_MAX_MINUTES = 1440;
export const MINUTE_MS = 60_000;

/** A summary to write: the column it is about, its bytes, and the column's msgpack as its frame keeps it (a dictionary without its entries). */
export interface SummaryPart {
  column: number;
  bytes: Buffer;
  /** Replaces the column's msgpack in its frame. */
  columnBytes?: Buffer;
}

function varintLength(x: number): number {
  let n = 1;
  while (x >= 0x80) {
    x = Math.floor(x / 0x80);
    n++;
  }
  return n;
}

function putVarint(out: Buffer, at: number, x: number): number {
  while (x >= 0x80) {
    out[at++] = (x % 0x80) | 0x80;
    x = Math.floor(x / 0x80);
  }
  out[at++] = x;
  return at;
}

/**
 * The summary of column number `column` (directory order), whose msgpack is `bytes`, in a block
 * of `n` events; null when the column gets none (only field columns and `ts` do).
 */
export function summarizeColumn(column: number, col: SummarisedColumn, bytes: Buffer, n: number): SummaryPart | null {
  if (!col.field) return col.name === 'ts' ? minutesSummary(column, decodeNumbers(unpack(bytes) as NumberColumn, n)) : null;
  if (col.e === 'k') return dictSummary(column, unpack(bytes) as Extract<StringColumn, { e: 'k' }>, n);
  if (col.e === 'i') return intsSummary(column, decodeNumbers((unpack(bytes) as Extract<StringColumn, { e: 'i' }>).v, n), INTS);
  if (col.e === 'u') {
    const values = textInts(unpack(bytes) as Extract<StringColumn, { e: 'u' }>, n);
    return values === null ? null : intsSummary(column, values, TEXT_INTS);
  }
  return null;
}

/** The present values of a text column when every one is an integer's canonical text (columns.ts textIntValues); null otherwise. */
function textInts(c: Extract<StringColumn, { e: 'u' }>, n: number): number[] | null {
  const values = textIntValues(c, n);
  if (values === null) return null;
  const out: number[] = [];
  for (const x of values) if (!Number.isNaN(x)) out.push(x);
  return out.length > 0 ? out : null;
}

function dictSummary(column: number, c: Extract<StringColumn, { e: 'k' }>, n: number): SummaryPart | null {
  const nd = c.d.length;
  if (nd > SUMMARY_MAX_ENTRIES) return null;
  let bytes = 0;
  const lengths = new Array<number>(nd);
  for (let k = 0; k < nd; k++) bytes += lengths[k] = Buffer.byteLength(c.d[k]!, 'utf8');
  if (bytes > SUMMARY_MAX_ENTRY_BYTES) return null;
  // Rows per code, then the absent rows. One-byte codes are tallied over all 256 values in a
  // plain Uint8Array view (no branch per row; a code past the entries, never written, leaves the
  // column unsummarised); two-byte codes through a branch.
  const counts = new Float64Array(nd + 1);
  const raw = c.i;
  if (c.w === 1) {
    const codes = new Uint8Array(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, n));
    const all = new Int32Array(256);
    for (let i = 0; i < codes.length; i++) all[codes[i]!]!++;
    for (let k = nd; k < 255; k++) if (all[k] !== 0) return null;
    for (let k = 0; k < nd; k++) counts[k] = all[k]!;
    counts[nd] = all[255]!;
  } else {
    for (let i = 0; i < n; i++) {
      const code = raw[2 * i]! | (raw[2 * i + 1]! << 8);
      if (code === 65535) counts[nd]!++;
      else if (code < nd) counts[code]!++;
      else return null;
    }
  }
  let size = varintLength(nd) + bytes;
  for (const len of lengths) size += varintLength(len);
  for (const x of counts) size += varintLength(x);
  const out = Buffer.allocUnsafe(size);
  let at = putVarint(out, 0, nd);
  for (let k = 0; k < nd; k++) {
    at = putVarint(out, at, lengths[k]!);
    at += out.write(c.d[k]!, at, 'utf8');
  }
  for (const x of counts) at = putVarint(out, at, x);
  return { column, bytes: wrap(column, DICT, out), columnBytes: pack({ e: 'k', i: c.i, w: c.w }) };
}

function intsSummary(column: number, v: readonly number[], kind: number): SummaryPart | null {
  if (v.length === 0) return null;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let exact = true;
  for (const x of v) {
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
    if (!Number.isSafeInteger(x) || !Number.isSafeInteger(sum)) exact = false;
  }
  // A text column's: how many events hold a value first.
  const at = kind === TEXT_INTS ? 4 : 0;
  const out = Buffer.allocUnsafe(at + 24);
  if (kind === TEXT_INTS) out.writeUInt32LE(v.length, 0);
  out.writeDoubleLE(min, at);
  out.writeDoubleLE(max, at + 8);
  out.writeDoubleLE(exact ? sum : Number.NaN, at + 16);
  return { column, bytes: wrap(column, kind, out) };
}

function minutesSummary(column: number, ts: readonly number[]): SummaryPart | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of ts) {
    if (!Number.isFinite(t)) return null;
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  if (ts.length === 0) return null;
  const first = Math.floor(lo / MINUTE_MS);
  const m = Math.floor(hi / MINUTE_MS) - first + 1;
  if (m > SUMMARY_MAX_MINUTES) return null;
  const counts = new Array<number>(m).fill(0);
  for (const t of ts) counts[Math.floor(t / MINUTE_MS) - first]!++;
  let size = 8 + varintLength(m);
  for (const x of counts) size += varintLength(x);
  const out = Buffer.allocUnsafe(size);
  out.writeDoubleLE(first * MINUTE_MS, 0);
  let at = putVarint(out, 8, m);
  for (const x of counts) at = putVarint(out, at, x);
  return { column, bytes: wrap(column, MINUTES, out) };
}

/** u32 column number, u8 kind, u32 length, the payload. */
function wrap(column: number, kind: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUInt32LE(column, 0);
  out[4] = kind;
  out.writeUInt32LE(payload.length, 5);
  payload.copy(out, 9);
  return out;
}

/** The summaries section: u32 count, then each summary. */
export function encodeSummaries(parts: readonly SummaryPart[]): Buffer {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(parts.length, 0);
  return Buffer.concat([head, ...parts.map((p) => p.bytes)]);
}

/** A column as parseSummaries checks a summary against it. */
export interface SummarisedColumn {
  field: boolean;
  name: string;
  e: string;
}

class Reader {
  at = 0;
  constructor(readonly b: Buffer) {}
  varint(end: number): number | null {
    let x = 0;
    let mul = 1;
    for (let k = 0; k < 8; k++) {
      if (this.at >= end) return null;
      const byte = this.b[this.at++]!;
      x += (byte & 0x7f) * mul;
      if (byte < 0x80) return x;
      mul *= 0x80;
    }
    return null;
  }
}

/**
 * Parses the summaries section at `at` of `b` (to its end) for `columns` of a block of `n`
 * events; null when it does not add up (a count total other than `n`, a summary of a column of
 * another encoding, bytes left over): then the block's head is damaged.
 */
export function parseSummaries(b: Buffer, at: number, columns: readonly SummarisedColumn[], n: number): Map<number, ColumnSummary> | null {
  if (at + 4 > b.length) return null;
  const count = b.readUInt32LE(at);
  const r = new Reader(b);
  r.at = at + 4;
  const out = new Map<number, ColumnSummary>();
  for (let s = 0; s < count; s++) {
    if (r.at + 9 > b.length) return null;
    const column = b.readUInt32LE(r.at);
    const kind = b[r.at + 4]!;
    const length = b.readUInt32LE(r.at + 5);
    r.at += 9;
    const end = r.at + length;
    const col = columns[column];
    if (end > b.length || col === undefined || out.has(column)) return null;
    let summary: ColumnSummary | null = null;
    if (kind === DICT && col.field && col.e === 'k') summary = parseDict(r, end, n);
    else if (kind === INTS && col.field && col.e === 'i' && length === 24) summary = { kind: 'ints', n, min: b.readDoubleLE(r.at), max: b.readDoubleLE(r.at + 8), sum: b.readDoubleLE(r.at + 16) };
    else if (kind === TEXT_INTS && col.field && col.e === 'u' && length === 28 && b.readUInt32LE(r.at) <= n) {
      summary = { kind: 'ints', n: b.readUInt32LE(r.at), min: b.readDoubleLE(r.at + 4), max: b.readDoubleLE(r.at + 12), sum: b.readDoubleLE(r.at + 20) };
    }
    else if (kind === MINUTES && !col.field && col.name === 'ts') summary = parseMinutes(r, end, n);
    if (summary === null) return null;
    if (summary.kind === 'ints') r.at = end;
    if (r.at !== end) return null;
    out.set(column, summary);
  }
  return r.at === b.length ? out : null;
}

function parseDict(r: Reader, end: number, n: number): ColumnSummary | null {
  const e = r.varint(end);
  if (e === null || e > SUMMARY_MAX_ENTRIES) return null;
  const d: string[] = [];
  for (let k = 0; k < e; k++) {
    const len = r.varint(end);
    if (len === null || r.at + len > end) return null;
    d.push(utf8Interned(r.b, r.at, r.at + len));
    r.at += len;
  }
  const counts: number[] = [];
  let total = 0;
  for (let k = 0; k <= e; k++) {
    const x = r.varint(end);
    if (x === null) return null;
    counts.push(x);
    total += x;
  }
  if (total !== n) return null;
  const absent = counts.pop()!;
  return { kind: 'dict', d, counts, absent };
}

function parseMinutes(r: Reader, end: number, n: number): ColumnSummary | null {
  if (r.at + 8 > end) return null;
  const first = r.b.readDoubleLE(r.at);
  r.at += 8;
  const m = r.varint(end);
  if (m === null || m < 1 || m > SUMMARY_MAX_MINUTES || !Number.isFinite(first) || first % MINUTE_MS !== 0) return null;
  const counts: number[] = [];
  let total = 0;
  for (let k = 0; k < m; k++) {
    const x = r.varint(end);
    if (x === null) return null;
    counts.push(x);
    total += x;
  }
  return total === n ? { kind: 'minutes', first, counts } : null;
}
