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
  | { e: 'u'; b: Uint8Array; l: Uint8Array }
  | { e: 'i'; v: NumberColumn }
  | { e: '4'; b: Uint8Array }
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
  walkDeltas(c.b, count, out, 0, 0, null, 0, 0, 0, 0);
  return out;
}

/**
 * The rows of a delta number column (`{e: "d"}`) whose value lies in [lo, hi], written to `rows`
 * in order; how many. The values are those decodeNumbers gives, compared as they are read instead
 * of made into an array first: 1.7x faster for a numeric range over a block of 2,000 3-byte deltas
 * (docs/benchmarks.md, 2026-11-28). Null for another encoding.
 */
export function selectDeltaRange(c: NumberColumn, count: number, lo: number, hi: number, rows: Int32Array): number | null {
  return c.e === 'd' ? selectDeltas(c.b, count, lo, hi, rows) : null;
}

/** Where the last long delta read by longDelta ended. */
let longEnd = 0;

/** The zigzag delta of 5 or more bytes at `pos` (its first 4 bytes all continue), read in doubles as walkDeltas reads it; its end to longEnd. */
function longDelta(b: Uint8Array, pos: number): number {
  const len = b.length;
  let zz = (b[pos]! & 0x7f) | ((b[pos + 1]! & 0x7f) << 7) | ((b[pos + 2]! & 0x7f) << 14) | ((b[pos + 3]! & 0x7f) << 21);
  pos += 4;
  let mul = 2 ** 28;
  let byte: number;
  do {
    if (pos >= len) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
    byte = b[pos++]!;
    zz += (byte & 0x7f) * mul;
    mul *= 0x80;
  } while (byte >= 0x80);
  longEnd = pos;
  return zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2;
}

/**
 * selectDeltaRange's walk: the same values as walkDeltas, each delta's 1 to 4 bytes read unrolled
 * while 4 bytes remain (no bound check per byte, no shift loop), longer ones by longDelta, the last
 * few values by walkDeltas. A function of its own, so that its numbers stay small integers where
 * the column's do (walkDeltas also decodes timestamps, which are doubles). Profile of
 * `responsesize > 100000 | count()` (bench/peers/ask.mjs, 2026-11-29): the walk was 60 % of the
 * scan threads.
 */
function selectDeltas(b: Uint8Array, count: number, lo: number, hi: number, rows: Int32Array): number {
  const len = b.length;
  let pos = 0;
  let prev = 0;
  let kept = 0;
  let i = 0;
  for (; i < count && pos + 4 <= len; i++) {
    const b0 = b[pos]!;
    if (b0 < 0x80) {
      prev += (b0 >>> 1) ^ -(b0 & 1);
      pos += 1;
    } else {
      const b1 = b[pos + 1]!;
      let z: number;
      if (b1 < 0x80) {
        z = (b0 & 0x7f) | (b1 << 7);
        pos += 2;
      } else {
        const b2 = b[pos + 2]!;
        if (b2 < 0x80) {
          z = (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
          pos += 3;
        } else {
          const b3 = b[pos + 3]!;
          if (b3 < 0x80) {
            z = (b0 & 0x7f) | ((b1 & 0x7f) << 7) | ((b2 & 0x7f) << 14) | (b3 << 21);
            pos += 4;
          } else {
            prev += longDelta(b, pos);
            pos = longEnd;
            if (prev >= lo && prev <= hi) rows[kept++] = i;
            continue;
          }
        }
      }
      prev += (z >>> 1) ^ -(z & 1);
    }
    if (prev >= lo && prev <= hi) rows[kept++] = i;
  }
  if (i === count) return kept;
  // The last values (fewer than 4 bytes left), with walkDeltas' checks.
  return walkDeltas(b, count, null, lo, hi, rows, i, pos, prev, kept);
}

/**
 * Reads a delta column: each value to out[i] when `out` is given, else row i to `rows` when the
 * value lies in [lo, hi]; returns how many rows were written to `rows`. Starts at row `from`, byte
 * `at`, after the value `prevValue`, with `keptBefore` rows kept (0, 0, 0, 0: the whole column;
 * else where selectDeltas stopped).
 */
function walkDeltas(b: Uint8Array, count: number, out: number[] | null, lo: number, hi: number, rows: Int32Array | null, from: number, at: number, prevValue: number, keptBefore: number): number {
  // Zigzag varint deltas. Most deltas take 1 to 4 bytes (timestamps a few ms apart, counters):
  // those are read with 32-bit operators; 5 bytes or more (the first timestamp of a block) in
  // doubles, as the encoder wrote them. 4x faster than doubles throughout on timestamp columns,
  // 2.7x on 3-byte deltas (bench: docs/benchmarks.md, 2026-11-28).
  const len = b.length;
  let pos = at;
  let prev = prevValue;
  let kept = keptBefore;
  for (let i = from; i < count; i++) {
    if (pos >= len) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
    let byte = b[pos++]!;
    if (byte < 0x80) {
      prev += (byte >>> 1) ^ -(byte & 1);
      if (out !== null) out[i] = prev;
      else if (prev >= lo && prev <= hi) rows![kept++] = i;
      continue;
    }
    let z = byte & 0x7f;
    let shift = 7;
    for (;;) {
      if (pos >= len) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
      byte = b[pos++]!;
      if (shift > 21) break;
      z |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
      shift += 7;
    }
    if (shift <= 21) {
      // At most 28 bits: zigzag with 32-bit operators.
      prev += (z >>> 1) ^ -(z & 1);
      if (out !== null) out[i] = prev;
      else if (prev >= lo && prev <= hi) rows![kept++] = i;
      continue;
    }
    let zz = z + (byte & 0x7f) * 2 ** shift;
    let mul = 2 ** (shift + 7);
    while (byte >= 0x80) {
      if (pos >= len) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
      byte = b[pos++]!;
      zz += (byte & 0x7f) * mul;
      mul *= 0x80;
    }
    prev += zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2;
    if (out !== null) out[i] = prev;
    else if (prev >= lo && prev <= hi) rows![kept++] = i;
  }
  return kept;
}

/**
 * Row by row what `decodeNumbers(c, count)` gives, for a view that reads few rows of a block (a
 * rare token's matches): no array of every value. Rows asked in increasing order (as a selection
 * reads them) continue from the last one, a delta column walked only up to the row asked, so a
 * column is walked at most once per block for its selected rows; the first row asked behind the
 * last one (a stage that reads kept rows in another order) decodes the column whole, once, and
 * every later row is read from that, so no order of reads costs more than two passes over it. The
 * lengths decodeNumbers checks are checked too: an f64 or run-length column's when the reader is
 * made, a delta column's ending early when a row past its end is asked (its frame's checksum
 * already held). Profile of the rare token over 1 M access-log events on the node (docs/benchmarks.md,
 * 2026-11-29, rare19c): decodeNumbers and walkDeltas, the built-in and integer columns decoded
 * whole for one matched row a block, were ~10 % of the query thread's samples.
 */
export function numberRows(c: NumberColumn, count: number): (i: number) => number {
  if (c.e === 'f') {
    if (c.b.byteLength !== count * 8) throw new LogsvcError('E_STATE_CORRUPT', 'f64 column has the wrong length');
    const view = new DataView(c.b.buffer, c.b.byteOffset, c.b.byteLength);
    return (i) => view.getFloat64(i * 8, true);
  }
  if (c.e === 'r') {
    let total = 0;
    for (let r = 0; r < c.n.length; r++) total += c.n[r]!;
    if (total !== count || c.n.length !== c.v.length) throw new LogsvcError('E_STATE_CORRUPT', `run-length column holds ${total} values, expected ${count}`);
    // The run holding the last row asked, and its first row.
    let run = 0;
    let first = 0;
    let all: number[] | null = null;
    return (i) => {
      if (all !== null) return all[i]!;
      if (i < first) return (all = decodeNumbers(c, count))[i]!;
      while (first + c.n[run]! <= i) first += c.n[run++]!;
      return c.v[run]!;
    };
  }
  const b = c.b;
  // The next row to read, the byte it starts at and the value before it.
  let row = 0;
  let pos = 0;
  let prev = 0;
  let all: number[] | null = null;
  return (i) => {
    // The row read last again (a row's @timestamp and @id both read it): its value.
    if (i === row - 1) return prev;
    if (all !== null) return all[i]!;
    if (i < row) return (all = decodeNumbers(c, count))[i]!;
    for (; row <= i; row++) {
      // The same values as walkDeltas: a one-byte delta (most of a timestamp column's) at once,
      // up to 4 bytes with 32-bit operators, longer ones in doubles (longDelta).
      const b0 = b[pos];
      if (b0 !== undefined && b0 < 0x80) {
        prev += (b0 >>> 1) ^ -(b0 & 1);
        pos += 1;
        continue;
      }
      let z = 0;
      let k = 0;
      let byte: number;
      do {
        if (pos + k >= b.length) throw new LogsvcError('E_STATE_CORRUPT', 'delta column ends early');
        byte = b[pos + k]!;
        z |= (byte & 0x7f) << (7 * k);
        k++;
      } while (byte >= 0x80 && k < 4);
      if (byte < 0x80) {
        prev += (z >>> 1) ^ -(z & 1);
        pos += k;
      } else {
        prev += longDelta(b, pos);
        pos = longEnd;
      }
    }
    return prev;
  };
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
  // A dictionary pays when values repeat a lot: codes are taken in the same pass that collects
  // the distinct values (one map lookup per value), and the pass stops once it cannot pay.
  const dict = new Map<string, number>();
  const codes = new Uint16Array(count);
  let fits = true;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      codes[i] = 65535;
      continue;
    }
    let k = dict.get(v);
    if (k === undefined) {
      dict.set(v, (k = dict.size));
      if (dict.size > 65534 || dict.size * 4 > count) {
        fits = false;
        break;
      }
    }
    codes[i] = k;
  }
  if (fits) {
    const d = [...dict.keys()];
    if (d.length >= 255) return { e: 'k', d, i: new Uint8Array(codes.buffer, codes.byteOffset, codes.byteLength), w: 2 };
    const idx = new Uint8Array(count);
    for (let i = 0; i < count; i++) idx[i] = codes[i] === 65535 ? 255 : codes[i]!;
    return { e: 'k', d, i: idx, w: 1 };
  }
  const typed = encodeTyped(values, count);
  if (typed !== null) return typed;
  if (raw !== undefined) {
    const refs = encodeReferences(values, count, raw);
    if (refs !== null) return refs;
  }
  return encodeText(values, count);
}

/** Longest canonical integer: 15 digits, exact in a double. */
const MAX_INT_DIGITS = 15;

/**
 * The value of an integer written exactly as String(n) writes it (so decoding gives back the same
 * text: no leading zeros, no "+", no "-0"), up to 15 digits; NaN otherwise. A char loop, not a
 * regular expression: this runs for every value of every numeric-looking column of every block.
 */
function canonicalInt(v: string): number {
  const neg = v.charCodeAt(0) === 45;
  const from = neg ? 1 : 0;
  const digits = v.length - from;
  if (digits < 1 || digits > MAX_INT_DIGITS) return NaN;
  const lead = v.charCodeAt(from);
  if (lead === 48 && (digits > 1 || neg)) return NaN;
  let n = 0;
  for (let i = from; i < v.length; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return neg ? -n : n;
}

/**
 * Writes the four octets of a dotted-quad IPv4 address without leading zeros (exactly what the
 * decoder writes back) at `out[at..at+3]`; false if `v` is not one.
 */
function canonicalIpv4(v: string, out: Uint8Array, at: number): boolean {
  let octet = 0;
  let digits = 0;
  let k = 0;
  for (let i = 0; i <= v.length; i++) {
    const c = i < v.length ? v.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || k > 3) return false;
      out[at + k++] = octet;
      octet = 0;
      digits = 0;
      continue;
    }
    const d = c - 48;
    if (d < 0 || d > 9 || (digits === 1 && octet === 0)) return false;
    octet = octet * 10 + d;
    if (++digits > 3 || octet > 255) return false;
  }
  return k === 4;
}

/**
 * Columns whose every event holds an integer (`{e: "i", v}`, a number column: sizes, counts,
 * durations) or an IPv4 address (`{e: "4", b}`, four bytes per event: client addresses), in the
 * canonical form the decoder writes back. As text they compress poorly (an access log's client
 * column stays at 1.6x under LZ4); as numbers or bytes they are a third of that.
 */
function encodeTyped(values: readonly (string | null | undefined)[], count: number): StringColumn | null {
  const first = values[0];
  if (count === 0 || first === null || first === undefined) return null;
  if (!Number.isNaN(canonicalInt(first))) {
    const nums = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      const v = values[i];
      const n = v === null || v === undefined ? NaN : canonicalInt(v);
      if (Number.isNaN(n)) return null;
      nums[i] = n;
    }
    return { e: 'i', v: encodeNumbers(nums) };
  }
  const b = Buffer.allocUnsafe(count * 4);
  if (!canonicalIpv4(first, b, 0)) return null;
  for (let i = 1; i < count; i++) {
    const v = values[i];
    if (v === null || v === undefined || !canonicalIpv4(v, b, i * 4)) return null;
  }
  return { e: '4', b };
}

function decodeTyped(c: { e: 'i'; v: NumberColumn } | { e: '4'; b: Uint8Array }, count: number): string[] {
  const out = new Array<string>(count);
  if (c.e === 'i') {
    const nums = decodeNumbers(c.v, count);
    for (let i = 0; i < count; i++) out[i] = String(nums[i]);
    return out;
  }
  if (c.b.length !== count * 4) throw new LogsvcError('E_STATE_CORRUPT', 'IPv4 column has the wrong length');
  for (let i = 0; i < count; i++) {
    const o = i * 4;
    out[i] = `${c.b[o]}.${c.b[o + 1]}.${c.b[o + 2]}.${c.b[o + 3]}`;
  }
  return out;
}

/**
 * Values as one UTF-8 run (`{e: "u", b, l}`): per event a varint, 0 absent, else the value's
 * length in UTF-16 units + 1. Unlike a msgpack array of strings, the run stays an undecoded `bin`
 * until a query reads the column, and the text compresses without headers between values.
 */
function encodeText(values: readonly (string | null | undefined)[], count: number): StringColumn {
  const lengths = Buffer.allocUnsafe(count * 5);
  const parts: string[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      lengths[pos++] = 0;
      continue;
    }
    parts.push(v);
    pos = putVarint(lengths, pos, v.length + 1);
  }
  return { e: 'u', b: Buffer.from(parts.join(''), 'utf8'), l: lengths.subarray(0, pos) };
}

function decodeText(c: { b: Uint8Array; l: Uint8Array }, count: number): (string | null)[] {
  // UTF-8 round trips keep UTF-16 lengths (a lone surrogate becomes U+FFFD, one unit for one).
  const text = Buffer.from(c.b.buffer, c.b.byteOffset, c.b.byteLength).toString('utf8');
  const read = varintReader(c.l, 'text column');
  const out = new Array<string | null>(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const code = read();
    if (code === 0) {
      out[i] = null;
      continue;
    }
    const end = at + code - 1;
    if (end > text.length) throw new LogsvcError('E_STATE_CORRUPT', 'text column is shorter than its lengths say');
    out[i] = text.slice(at, end);
    at = end;
  }
  if (at !== text.length) throw new LogsvcError('E_STATE_CORRUPT', 'text column is longer than its lengths say');
  return out;
}

/** Past `units` UTF-16 units of UTF-8 bytes from `pos` (four bytes are two units, two or three one): the position after them. */
function skipUnits(b: Uint8Array, pos: number, units: number): number {
  let u = 0;
  while (u < units && pos < b.length) {
    const x = b[pos]!;
    const w = x < 0x80 ? 1 : x >= 0xf0 ? 4 : x >= 0xe0 ? 3 : 2;
    pos += w;
    u += w === 4 ? 2 : 1;
  }
  if (u !== units || pos > b.length) throw new LogsvcError('E_STATE_CORRUPT', 'text column is shorter than its lengths say');
  return pos;
}

/**
 * The values of a text column (`{e: "u"}`) by row with every ASCII unit that `hit` marks (one
 * flag per code 0-127) replaced by `rep`: from the UTF-8 bytes, one decode of the result for the
 * whole column. What replace() gives for a pattern that matches exactly one unit whatever
 * surrounds it. A row is null where absent and undefined where the caller substitutes the value
 * itself: one with a non-ASCII unit (`hit` does not say whether the pattern matches it) or longer
 * than `maxUnits`. Null for the whole column when the result would pass `maxBytes`. `rep` must be
 * well-formed UTF-16 (it is written as UTF-8).
 */
export function substituteAsciiUnits(c: { b: Uint8Array; l: Uint8Array }, count: number, hit: Uint8Array, rep: string, maxUnits: number, maxBytes: number): (string | null | undefined)[] | null {
  const b = c.b;
  const read = varintReader(c.l, 'text column');
  const repBytes = Buffer.from(rep, 'utf8');
  const rb = repBytes.length;
  // One ASCII unit for one: the column's bytes copied at once and the matched ones overwritten,
  // rows then read at their own offsets (an ASCII row's bytes are its units).
  const inPlace = rb === 1 ? Buffer.from(b) : null;
  const r0 = repBytes[0] ?? 0;
  // Per row: where its bytes start, its length in units, its matches (-1: the caller's, -2: absent).
  const start = new Int32Array(count);
  const units = new Int32Array(count);
  const hits = new Int32Array(count);
  let pos = 0;
  let size = 0;
  for (let i = 0; i < count; i++) {
    const code = read();
    if (code === 0) {
      hits[i] = -2;
      continue;
    }
    const len = code - 1;
    // A row has at least as many bytes as units.
    if (pos + len > b.length) throw new LogsvcError('E_STATE_CORRUPT', 'text column is shorter than its lengths say');
    start[i] = pos;
    units[i] = len;
    const end = pos + len;
    let n = 0;
    let p = pos;
    if (inPlace !== null) {
      for (; p < end; p++) {
        const x = b[p]!;
        if (x >= 0x80) break;
        if (hit[x] === 1) {
          n++;
          inPlace[p] = r0;
        }
      }
    } else {
      for (; p < end; p++) {
        const x = b[p]!;
        if (x >= 0x80) break;
        n += hit[x]!;
      }
    }
    if (p < end) {
      // A non-ASCII unit: the rest of the row by its UTF-8 lead bytes, the row left to the caller.
      pos = skipUnits(b, p, end - p);
      hits[i] = -1;
      continue;
    }
    pos = end;
    if (len > maxUnits) {
      hits[i] = -1;
      continue;
    }
    hits[i] = n;
    size += len + n * (rb - 1);
    if (size > maxBytes) return null;
  }
  if (pos !== b.length) throw new LogsvcError('E_STATE_CORRUPT', 'text column is longer than its lengths say');
  const res = new Array<string | null | undefined>(count);
  if (inPlace !== null) {
    // latin1: one character per byte, so the ASCII rows' offsets hold (other rows are not read).
    const text = inPlace.toString('latin1');
    for (let i = 0; i < count; i++) {
      const n = hits[i]!;
      res[i] = n === -2 ? null : n === -1 ? undefined : text.slice(start[i]!, start[i]! + units[i]!);
    }
    return res;
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (let i = 0; i < count; i++) {
    if (hits[i]! < 0) continue;
    const end = start[i]! + units[i]!;
    for (let p = start[i]!; p < end; p++) {
      const x = b[p]!;
      if (hit[x] === 1) for (let k = 0; k < rb; k++) out[o++] = repBytes[k]!;
      else out[o++] = x;
    }
  }
  // All ASCII unless the replacement is not: latin1 is then the same text, decoded faster.
  const text = rb === rep.length ? out.toString('latin1') : out.toString('utf8');
  const grow = rep.length - 1;
  let at = 0;
  for (let i = 0; i < count; i++) {
    const n = hits[i]!;
    if (n < 0) {
      res[i] = n === -2 ? null : undefined;
      continue;
    }
    const len = units[i]! + n * grow;
    res[i] = text.slice(at, at + len);
    at += len;
  }
  return res;
}

/** Longest integer text read as an integer (parseNumber's plain integers: at most 15 characters). */
export const MAX_INT_TEXT = 15;

/**
 * The integer whose canonical text (as String(n) writes it: no leading zeros, no "-0", at most 15
 * characters, which parseNumber reads as that integer, so String(x) gives the text back) is
 * b[bp, end), 0 < end - bp <= MAX_INT_TEXT and end <= b.length; NaN when the bytes are not one.
 */
export function textIntAt(b: Uint8Array, bp: number, end: number): number {
  const neg = b[bp] === 45; /* - */
  const first = neg ? bp + 1 : bp;
  if (first >= end || (b[first] === 48 /* 0 */ && (end - first > 1 || neg))) return Number.NaN;
  // Up to 9 digits in 32-bit integers (below 10^9), two digits a step (a chain of half as many
  // dependent multiplies: a quarter less time for five-digit ids), longer ones in doubles (exact
  // below 2^53).
  let x = 0;
  if (end - first <= 9) {
    let k = first;
    if (((end - first) & 1) === 1) {
      x = (b[k++]! - 48) | 0;
      if (x >>> 0 > 9) return Number.NaN;
    }
    for (; k < end; k += 2) {
      const d = (b[k]! - 48) | 0;
      const e = (b[k + 1]! - 48) | 0;
      if (d >>> 0 > 9 || e >>> 0 > 9) return Number.NaN;
      x = (x * 100 + (d * 10 + e)) | 0;
    }
  } else {
    for (let k = first; k < end; k++) {
      const d = b[k]! - 48;
      if (d < 0 || d > 9) return Number.NaN;
      x = x * 10 + d;
    }
  }
  return neg ? -x : x;
}

/**
 * The values of a text column (`{e: "u"}`) as integers, row by row (NaN where a row has none),
 * when every present value is an integer's canonical text (textIntAt); null otherwise. Read from
 * the UTF-8 bytes without making a string: most text columns fail on their first value. Written
 * to `into` when it has room (its first `count` entries), else to a new array.
 */
export function textIntValues(c: { b: Uint8Array; l: Uint8Array }, count: number, into?: Float64Array): Float64Array | null {
  const out = into !== undefined && into.length >= count ? into : new Float64Array(count);
  const b = c.b;
  const l = c.l;
  const bl = b.length;
  const ll = l.length;
  let lp = 0;
  let bp = 0;
  for (let i = 0; i < count; i++) {
    // Per event a varint: 0 absent, else the value's length in UTF-16 units + 1 (bytes, for digits).
    // Integer texts are at most 15 long: a length of two bytes or more is not one.
    if (lp >= ll) return null;
    const v = l[lp++]!;
    if (v === 0) {
      out[i] = Number.NaN;
      continue;
    }
    const len = v - 1;
    if (len === 0 || len > MAX_INT_TEXT) return null;
    const end = bp + len;
    if (end > bl) return null;
    const x = textIntAt(b, bp, end);
    if (x !== x) return null;
    out[i] = x;
    bp = end;
  }
  return out;
}

/** Reads unsigned varints from `b` one at a time; throws E_STATE_CORRUPT past its end. */
function varintReader(b: Uint8Array, what: string): () => number {
  let pos = 0;
  return () => {
    let x = 0;
    let mul = 1;
    for (;;) {
      if (pos >= b.length) throw new LogsvcError('E_STATE_CORRUPT', `${what} ends early`);
      const byte = b[pos++]!;
      x += (byte & 0x7f) * mul;
      if (byte < 0x80) return x;
      mul *= 0x80;
    }
  };
}

function decodeReferences(c: { p: Uint8Array; v: string[] }, count: number, raw: readonly string[]): (string | null)[] {
  const out = new Array<string | null>(count);
  let lit = 0;
  const varint = varintReader(c.p, 'reference column');
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
  if (c.e === 'u') return decodeText(c, count);
  if (c.e === 'i' || c.e === '4') return decodeTyped(c, count);
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
