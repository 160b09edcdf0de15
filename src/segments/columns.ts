/**
 * Column encodings inside a block body, chosen per column by what the data looks like:
 *
 * - numbers (timestamps, queue positions): zigzag varint deltas (`{e: "d", b}`), or runs
 *   (`{e: "r", v, n}`) when values repeat (every event of a record shares its offset and ingest time);
 * - strings: a dictionary (`{e: "k", d, i}`, u8 or u16 indices, the last code meaning "absent") when
 *   few distinct values repeat (zones, methods, status codes); else, for fields whose values mostly
 *   occur in the event's own @rawstring (what parsers extract), references into it (`{e: "x", p, v}`:
 *   per event a varint code — 0 absent, 1 the next literal of `v`, k >= 2 the substring starting at
 *   k - 2 — followed for k >= 2 by a varint length); else a plain array (`{e: "s", v}`).
 *
 * Delta and dictionary coding matter because LZ4's 64 KiB window sees little of a 1 MB column: on
 * the access-log dataset they shrink the non-raw columns several times over (docs/benchmarks.md).
 */
import { LogsvcError } from '../lib/errors.js';

export type NumberColumn = { e: 'd'; b: Uint8Array } | { e: 'r'; v: number[]; n: number[] } | { e: 'f'; b: Uint8Array };

/** Deltas up to this size stay exact through zigzag coding (2 * d + 1 <= 2^53). */
const MAX_DELTA = 2 ** 51;

function asFloats(values: readonly number[]): NumberColumn {
  const f = new Float64Array(values);
  return { e: 'f', b: new Uint8Array(f.buffer) };
}
export type StringColumn =
  | { e: 'k'; d: string[]; i: Uint8Array; w: 1 | 2 }
  | { e: 's'; v: (string | null)[] }
  | { e: 'x'; p: Uint8Array; v: string[] };

function runsOf(values: readonly number[]): { v: number[]; n: number[] } {
  const v: number[] = [];
  const n: number[] = [];
  for (const x of values) {
    if (v.length > 0 && v[v.length - 1] === x) n[n.length - 1]!++;
    else {
      v.push(x);
      n.push(1);
    }
  }
  return { v, n };
}

/**
 * Integers (ms timestamps, byte offsets, indices) get runs or deltas; anything else (a fraction, a
 * value or jump beyond 2^51) falls back to plain f64 (`{e: "f", b}`, little-endian) so no value is
 * ever changed by its encoding.
 */
export function encodeNumbers(values: readonly number[]): NumberColumn {
  const runs = runsOf(values);
  if (runs.v.length * 4 <= values.length) return { e: 'r', ...runs };
  const out = Buffer.allocUnsafe(values.length * 10);
  let pos = 0;
  let prev = 0;
  for (const x of values) {
    if (!Number.isSafeInteger(x) || Math.abs(x - prev) > MAX_DELTA) return asFloats(values);
    const d = x - prev;
    prev = x;
    // zigzag without 32-bit operators (values exceed 2^31)
    let z = d >= 0 ? d * 2 : -d * 2 - 1;
    while (z >= 0x80) {
      out[pos++] = (z % 0x80) | 0x80;
      z = Math.floor(z / 0x80);
    }
    out[pos++] = z;
  }
  return { e: 'd', b: out.subarray(0, pos) };
}

export function decodeNumbers(c: NumberColumn, count: number): number[] {
  const out = new Array<number>(count);
  if (c.e === 'f') {
    if (c.b.byteLength !== count * 8) throw new LogsvcError('E_STATE_CORRUPT', 'f64 column has the wrong length');
    const view = new DataView(c.b.buffer, c.b.byteOffset, c.b.byteLength);
    for (let i = 0; i < count; i++) out[i] = view.getFloat64(i * 8, true);
    return out;
  }
  if (c.e === 'r') {
    let k = 0;
    for (let r = 0; r < c.v.length; r++) for (let j = 0; j < c.n[r]!; j++) out[k++] = c.v[r]!;
    if (k !== count) throw new LogsvcError('E_STATE_CORRUPT', `run-length column holds ${k} values, expected ${count}`);
    return out;
  }
  const b = c.b;
  let pos = 0;
  let prev = 0;
  for (let i = 0; i < count; i++) {
    let z = 0;
    let mul = 1;
    for (;;) {
      if (pos >= b.length) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
      const byte = b[pos++]!;
      z += (byte & 0x7f) * mul;
      if (byte < 0x80) break;
      mul *= 0x80;
    }
    const d = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    prev += d;
    out[i] = prev;
  }
  return out;
}

function putVarint(out: Buffer, pos: number, x: number): number {
  while (x >= 0x80) {
    out[pos++] = (x & 0x7f) | 0x80;
    x >>>= 7;
  }
  out[pos++] = x;
  return pos;
}

/** Substring references into the raw strings, or null if too few values are substrings. */
function encodeReferences(values: readonly (string | null | undefined)[], count: number, raw: readonly string[]): StringColumn | null {
  const out = Buffer.allocUnsafe(count * 11);
  const literals: string[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      out[pos++] = 0;
      continue;
    }
    const at = v.length === 0 ? -1 : raw[i]!.indexOf(v);
    if (at < 0) {
      out[pos++] = 1;
      literals.push(v);
      // Mostly literals: references would only add bytes.
      if (literals.length * 4 > count) return null;
      continue;
    }
    pos = putVarint(out, pos, at + 2);
    pos = putVarint(out, pos, v.length);
  }
  return { e: 'x', p: out.subarray(0, pos), v: literals };
}

export function encodeStrings(values: readonly (string | null | undefined)[], count: number, raw?: readonly string[]): StringColumn {
  const dict = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v === null || v === undefined || dict.has(v)) continue;
    dict.set(v, dict.size);
    if (dict.size > 65534) break;
  }
  // A dictionary pays when values repeat a lot.
  if (dict.size <= 65534 && dict.size * 4 <= count) {
    const w: 1 | 2 = dict.size < 255 ? 1 : 2;
    const absent = w === 1 ? 255 : 65535;
    const idx = w === 1 ? new Uint8Array(count) : new Uint16Array(count);
    for (let i = 0; i < count; i++) {
      const v = values[i];
      idx[i] = v === null || v === undefined ? absent : dict.get(v)!;
    }
    return { e: 'k', d: [...dict.keys()], i: new Uint8Array(idx.buffer, idx.byteOffset, idx.byteLength), w };
  }
  if (raw !== undefined) {
    const refs = encodeReferences(values, count, raw);
    if (refs !== null) return refs;
  }
  const v = new Array<string | null>(count);
  for (let i = 0; i < count; i++) v[i] = values[i] ?? null;
  return { e: 's', v };
}

function decodeReferences(c: { p: Uint8Array; v: string[] }, count: number, raw: readonly string[]): (string | null)[] {
  const out = new Array<string | null>(count);
  const b = c.p;
  let pos = 0;
  let lit = 0;
  const varint = (): number => {
    let x = 0;
    let shift = 0;
    for (;;) {
      if (pos >= b.length) throw new LogsvcError('E_STATE_CORRUPT', 'reference column ends early');
      const byte = b[pos++]!;
      x += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return x;
      shift += 7;
    }
  };
  for (let i = 0; i < count; i++) {
    const code = varint();
    if (code === 0) out[i] = null;
    else if (code === 1) out[i] = c.v[lit++] ?? null;
    else {
      const len = varint();
      out[i] = raw[i]!.slice(code - 2, code - 2 + len);
    }
  }
  return out;
}

export function decodeStrings(c: StringColumn, count: number, raw?: readonly string[]): (string | null)[] {
  if (c.e === 's') return c.v;
  if (c.e === 'x') {
    if (raw === undefined) throw new LogsvcError('E_INTERNAL', 'a reference column needs the raw strings');
    return decodeReferences(c, count, raw);
  }
  const out = new Array<string | null>(count);
  const view = new DataView(c.i.buffer, c.i.byteOffset, c.i.byteLength);
  const absent = c.w === 1 ? 255 : 65535;
  if (c.i.byteLength !== count * c.w) throw new LogsvcError('E_STATE_CORRUPT', 'dictionary column has the wrong length');
  for (let i = 0; i < count; i++) {
    const k = c.w === 1 ? view.getUint8(i) : view.getUint16(i * 2, true);
    out[i] = k === absent ? null : (c.d[k] ?? null);
  }
  return out;
}

/**
 * The raw strings: one UTF-8 buffer of all of them back to back, plus their byte lengths. A plain
 * run of text compresses better than msgpack's per-string headers interleaved with it.
 */
export interface RawColumn {
  e: 'j';
  b: Uint8Array;
  l: NumberColumn;
}

export function encodeRaw(raw: readonly string[]): RawColumn {
  const parts = raw.map((r) => Buffer.from(r, 'utf8'));
  return { e: 'j', b: Buffer.concat(parts), l: encodeNumbers(parts.map((p) => p.length)) };
}

export function decodeRaw(c: RawColumn, count: number): string[] {
  const lengths = decodeNumbers(c.l, count);
  const buf = Buffer.from(c.b.buffer, c.b.byteOffset, c.b.byteLength);
  const out = new Array<string>(count);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const end = pos + lengths[i]!;
    if (end > buf.length) throw new LogsvcError('E_STATE_CORRUPT', 'raw column is shorter than its lengths say');
    out[i] = buf.toString('utf8', pos, end);
    pos = end;
  }
  return out;
}
