/**
 * One row of an encoded column, without decoding the whole column into strings: for a query that
 * reads a few rows of a block (a rare token's matches; issue 19), where decoding every value of
 * every column (and rebuilding every templated raw string) cost ~60 % of its scan. What a row reader
 * prepares once per column is cheap (numbers, offsets into one run of text, no string per row);
 * each value it gives is the one `decodeStrings` / `decodeRaw` (columns.ts) give for that row, and
 * the same damage is reported as E_STATE_CORRUPT.
 */
import { Buffer, isAscii } from 'node:buffer';
import { LogsvcError } from '../lib/errors.js';
import { decodeNumbers, numberRows, type StringColumn } from './columns.js';
import type { RawColumn, TemplateRaw } from './raw-columns.js';

/** Row index -> the value (null: the row has none). */
export type RowReader = (i: number) => string | null;

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', what);
}

/** Reads unsigned varints from `b` in order (the position after each in `pos.at`). */
function varint(b: Uint8Array, pos: { at: number }, what: string): number {
  let x = 0;
  let mul = 1;
  for (;;) {
    if (pos.at >= b.length) corrupt(`${what} ends early`);
    const byte = b[pos.at++]!;
    x += (byte & 0x7f) * mul;
    if (byte < 0x80) return x;
    mul *= 0x80;
  }
}

function bufferOf(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** A text column (`u`): its rows' UTF-16 offsets, then each row sliced from the run (ASCII: from the bytes). */
function textReader(c: { b: Uint8Array; l: Uint8Array }, count: number): RowReader {
  const starts = new Int32Array(count + 1);
  const absent = new Uint8Array(count);
  const pos = { at: 0 };
  const l = c.l;
  let p = 0;
  let at = 0;
  for (let i = 0; i < count; i++) {
    starts[i] = at;
    // A one-byte length (a value of up to 126 units) read here, longer ones by varint: this walk
    // is made for every text column of each block a rare token's match is in (textReader 3-5 % of
    // the scan in its profiles; 8.0 -> 7.2 us a 1,855-row column, docs/benchmarks.md 2026-11-29, rare19c).
    let code = p < l.length ? l[p]! : 0x80;
    if (code < 0x80) p++;
    else {
      pos.at = p;
      code = varint(l, pos, 'text column');
      p = pos.at;
    }
    if (code === 0) absent[i] = 1;
    else at += code - 1;
    // A UTF-16 unit takes at least one byte: more units than bytes cannot be.
    if (at > c.b.length) corrupt('text column is shorter than its lengths say');
  }
  starts[count] = at;
  const buf = bufferOf(c.b);
  // ASCII: bytes are UTF-16 units, so a row is its own bytes; else the run is decoded once, as decodeStrings does.
  if (isAscii(buf)) {
    if (at !== buf.length) corrupt(at > buf.length ? 'text column is shorter than its lengths say' : 'text column is longer than its lengths say');
    return (i) => (absent[i] === 1 ? null : buf.toString('latin1', starts[i]!, starts[i + 1]!));
  }
  const text = buf.toString('utf8');
  if (at > text.length) corrupt('text column is shorter than its lengths say');
  if (at !== text.length) corrupt('text column is longer than its lengths say');
  return (i) => (absent[i] === 1 ? null : text.slice(starts[i]!, starts[i + 1]!));
}

/** A reference column (`x`): each row's code and length in one pass, the value cut from its raw string when asked for. */
function referenceReader(c: { p: Uint8Array; v: string[] }, count: number, raw: RowReader): RowReader {
  const codes = new Float64Array(count);
  const lens = new Float64Array(count);
  const lits = new Int32Array(count);
  const pos = { at: 0 };
  let lit = 0;
  for (let i = 0; i < count; i++) {
    const code = varint(c.p, pos, 'reference column');
    codes[i] = code;
    if (code === 1) lits[i] = lit++;
    else if (code >= 2) lens[i] = varint(c.p, pos, 'reference column');
  }
  return (i) => {
    const code = codes[i]!;
    if (code === 0) return null;
    if (code === 1) return c.v[lits[i]!] ?? null;
    return raw(i)!.slice(code - 2, code - 2 + lens[i]!);
  };
}

/** Row by row what `decodeStrings(c, count, raw)` gives; `raw` is asked only by a reference column. */
export function stringRows(c: StringColumn, count: number, raw?: RowReader): RowReader {
  switch (c.e) {
    case 's':
      return (i) => c.v[i] ?? null;
    case 'u':
      return textReader(c, count);
    case 'i': {
      const nums = numberRows(c.v, count);
      return (i) => String(nums(i));
    }
    case '4': {
      if (c.b.length !== count * 4) corrupt('IPv4 column has the wrong length');
      const b = c.b;
      return (i) => `${b[i * 4]}.${b[i * 4 + 1]}.${b[i * 4 + 2]}.${b[i * 4 + 3]}`;
    }
    case 'x':
      if (raw === undefined) throw new LogsvcError('E_INTERNAL', 'a reference column needs the raw strings');
      return referenceReader(c, count, raw);
    case 'k': {
      if (c.i.byteLength !== count * c.w) corrupt('dictionary column has the wrong length');
      const view = new DataView(c.i.buffer, c.i.byteOffset, c.i.byteLength);
      const d = c.d;
      if (c.w === 1) return (i) => (c.i[i] === 255 ? null : (d[c.i[i]!] ?? null));
      return (i) => {
        const k = view.getUint16(i * 2, true);
        return k === 65535 ? null : (d[k] ?? null);
      };
    }
  }
}

/**
 * Row by row what `decodeRaw(c, count, field)` gives: `field(j)` reads the j-th field column of
 * the body row by row (templates only; it must not itself refer to the raw strings).
 */
export function rawRows(c: RawColumn, count: number, field?: (j: number) => RowReader): (i: number) => string {
  if (c.e === 't') {
    if (field === undefined) throw new LogsvcError('E_INTERNAL', 'template-encoded raw strings need the field columns');
    return templateRows(c, count, field);
  }
  const lengths = decodeNumbers(c.l, count);
  const starts = new Int32Array(count + 1);
  let at = 0;
  for (let i = 0; i < count; i++) {
    starts[i] = at;
    at += lengths[i]!;
    if (at > c.b.length) corrupt('raw column is shorter than its lengths say');
  }
  starts[count] = at;
  const buf = bufferOf(c.b);
  return (i) => buf.toString('utf8', starts[i]!, starts[i + 1]!);
}

function templateRows(c: TemplateRaw, count: number, field: (j: number) => RowReader): (i: number) => string {
  return templateRowsOf(
    c.t,
    decodeNumbers(c.li, count),
    c.g.map((g) => stringRows(g, count)),
    field,
  );
}

/**
 * Row by row a templated raw column from its parts: the layouts, each row's layout number and
 * each gap column row by row (read decoded, or in place from its bytes: query/block-view.ts).
 */
export function templateRowsOf(layouts: readonly (readonly number[])[], ids: ArrayLike<number>, gaps: readonly RowReader[], field: (j: number) => RowReader): (i: number) => string {
  const cols = new Map<number, RowReader>();
  return (i) => {
    const layout = layouts[ids[i]!];
    if (layout === undefined || gaps.length <= layout.length) corrupt(`raw template: event ${i} has no layout ${ids[i]}`);
    let s = '';
    for (let k = 0; ; k++) {
      const g = gaps[k]!(i);
      if (g === null) corrupt(`raw template: event ${i} lacks gap ${k}`);
      s += g;
      if (k === layout.length) break;
      const j = layout[k]!;
      let col = cols.get(j);
      if (col === undefined) cols.set(j, (col = field(j)));
      const v = col(i);
      if (v === null) corrupt(`raw template: event ${i} lacks the value of field column ${j}`);
      s += v;
    }
    return s;
  };
}
