/**
 * Which rows of a run of UTF-8 values hold a needle, found in the stored bytes without decoding
 * them into strings (issue 19): a plain text column (`u`), a block's raw strings stored as UTF-8
 * (`j`). The needle's bytes are searched over the whole run at once and each match is assigned to
 * the row it lies in (a match that runs from one value into the next is none).
 *
 * An exact needle is found by `Buffer.indexOf` (memchr-driven); a folded one (ASCII, the only
 * case text-match.ts gives bytes for) by a case-insensitive pattern over the run read as Latin-1:
 * UTF-8's multi-byte sequences are bytes of 0x80 and over, which such a pattern never matches, so
 * its matches are those of the folded text (text with a Kelvin sign excepted: callers check
 * `hasKelvin` when the needle holds `k`). Measured on an access-log block (0.8 MB of raw text):
 * 35 µs exact, 650 µs folded, against ~800 µs to decode the run into JavaScript strings alone.
 */
import { Buffer, isAscii } from 'node:buffer';
import { LogsvcError } from '../lib/errors.js';
import type { Needle } from './text-match.js';
import { nativeFind } from './native-text.js';

/** Where each row of a run of bytes lies: row i is buf[starts[i], ends[i]) (ends[i] = starts[i + 1] when `ends` is null). */
export interface RowLayout {
  /** n + 1 offsets (the last: where the run ends). */
  starts: Int32Array;
  /** Where each row ends, when bytes that are no row's lie between rows (msgpack headers). */
  ends?: Int32Array;
  /** 1 where a row has no value (its range is empty), or null when every row has one. */
  absent: Uint8Array | null;
  /** Every byte is ASCII (then byte offsets are UTF-16 offsets too). */
  ascii: boolean;
}

/**
 * The values of a column as one run of bytes, laid out in rows on first need (reading the rows'
 * lengths costs a pass over them: a run without a match and without a partial match to follow
 * never pays it). `layout()` is null when the run cannot be cut into rows as bytes (see textRows).
 */
export class ByteRows {
  private laid: RowLayout | null | undefined;
  constructor(
    readonly buf: Buffer,
    private readonly cut: () => RowLayout | null,
  ) {}
  layout(): RowLayout | null {
    if (this.laid === undefined) this.laid = this.cut();
    return this.laid;
  }
}

const KELVIN = Buffer.from('\u212a', 'utf8');

/** True when the run holds a Kelvin sign (U+212A, which folds to `k`). */
export function hasKelvin(buf: Buffer): boolean {
  return buf.indexOf(KELVIN) >= 0;
}

/**
 * False when no value of the run can end in a partial match of the needle: its first unit is
 * ASCII (a single byte, never part of another character's bytes) and no byte of the run is it (in
 * either case when folded; a Kelvin sign, which folds to `k`, is checked for by the callers).
 * One memchr-driven pass, against a look at every row's last bytes.
 */
export function mayBegin(buf: Buffer, nd: Needle): boolean {
  const c = nd.u[0]!;
  if (c >= 0x80 || buf.indexOf(c) >= 0) return true;
  return nd.folded && c >= 97 && c <= 122 && buf.indexOf(c - 32) >= 0;
}

/** Bytes as a Buffer without copying them. */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', what);
}

/**
 * A text column's rows (columns.ts `encodeText`: per row a varint, 0 absent, else its length in
 * UTF-16 units + 1) as byte ranges. Null when a row boundary falls inside a 4-byte sequence (two
 * values that joined into one astral character when the run was encoded: only decoding splits
 * them again).
 */
export function textRows(b: Uint8Array, l: Uint8Array, n: number): ByteRows {
  const buf = asBuffer(b);
  return new ByteRows(buf, () => textLayout(buf, l, n));
}

function textLayout(buf: Buffer, l: Uint8Array, n: number): RowLayout | null {
  const ascii = isAscii(buf);
  const starts = new Int32Array(n + 1);
  let absent: Uint8Array | null = null;
  let pos = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    starts[i] = at;
    let x = 0;
    let mul = 1;
    for (;;) {
      if (pos >= l.length) corrupt('text column ends early');
      const byte = l[pos++]!;
      x += (byte & 0x7f) * mul;
      if (byte < 0x80) break;
      mul *= 0x80;
    }
    if (x === 0) {
      (absent ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    const units = x - 1;
    if (ascii) at += units;
    else {
      // UTF-8 walked unit by unit: 1 to 3 bytes hold one unit, 4 bytes two.
      let left = units;
      while (left > 0) {
        if (at >= buf.length) corrupt('text column is shorter than its lengths say');
        const c = buf[at]!;
        const len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        const u = len === 4 ? 2 : 1;
        if (u > left) return null;
        left -= u;
        at += len;
      }
    }
    if (at > buf.length) corrupt('text column is shorter than its lengths say');
  }
  starts[n] = at;
  if (at !== buf.length) corrupt('text column is longer than its lengths say');
  return { starts, absent, ascii };
}

/** Raw strings stored as UTF-8 with their byte lengths (raw-columns.ts `encodeRaw`) as byte ranges. */
export function rawRows(b: Uint8Array, lengths: () => readonly number[], n: number): ByteRows {
  const buf = asBuffer(b);
  return new ByteRows(buf, () => {
    const starts = new Int32Array(n + 1);
    const ls = lengths();
    let at = 0;
    for (let i = 0; i < n; i++) {
      starts[i] = at;
      at += ls[i]!;
      if (at > buf.length) corrupt('raw column is shorter than its lengths say');
    }
    starts[n] = at;
    return { starts, absent: null, ascii: isAscii(buf) };
  });
}

/**
 * The needle's next position in `buf` at or after a given one (-1: none), or null when a quick
 * look finds it cannot be there. Native (text_search.cc) where built; else `indexOf` for an exact
 * needle, and for a folded one a case-insensitive pattern over the run read as a Latin-1 string
 * (made only once a byte of the needle's rarest letter is seen: memchr).
 */
function finder(buf: Buffer, nd: Needle): ((from: number) => number) | null {
  const bytes = nd.bytes!;
  if (nativeFind !== null) {
    const folded = nd.folded;
    return (from) => nativeFind!(buf, from, bytes, folded);
  }
  return jsFinder(buf, nd);
}

/** `finder` without the native module (also what test/unit/query/native-text.test.ts holds it to). */
export function jsFinder(buf: Buffer, nd: Needle): ((from: number) => number) | null {
  const bytes = nd.bytes!;
  const re = nd.latin1;
  if (re === null) return (from) => buf.indexOf(bytes, from);
  if (!nd.rare.some((c) => buf.indexOf(c) >= 0)) return null;
  const text = buf.toString('latin1');
  return (from) => {
    re.lastIndex = from;
    const got = re.exec(text);
    return got === null ? -1 : got.index;
  };
}

/**
 * Sets out[i] = 1 for every row i whose bytes hold the needle; true when any did, null when the
 * run holds it but cannot be laid out in rows (then nothing is set). The needle must have bytes
 * (Needle.bytes) and, when it is folded and holds `k`, the run no Kelvin sign.
 */
export function markRows(rows: ByteRows, nd: Needle, hits: () => Uint8Array): boolean | null {
  const buf = rows.buf;
  const bytes = nd.bytes!;
  const m = bytes.length;
  const next = finder(buf, nd);
  if (next === null) return false;
  let any = false;
  let row = 0;
  let p = next(0);
  if (p < 0) return false;
  const layout = rows.layout();
  if (layout === null) return null;
  const { starts, ends } = layout;
  const n = starts.length - 1;
  const out = hits();
  while (p >= 0) {
    while (row < n && starts[row + 1]! <= p) row++;
    if (row >= n) break;
    const end = ends === undefined ? starts[row + 1]! : ends[row]!;
    if (p + m <= end) {
      out[row] = 1;
      any = true;
      // The rest of this row need not be searched.
      p = starts[row + 1]! >= buf.length ? -1 : next(starts[row + 1]!);
    } else p = next(p + 1);
  }
  return any;
}
