/**
 * The columns of a block as text search reads them (issue 19): a stored field, a template's gap
 * column, or the raw strings, each answering for one needle which rows hold it, which rows end in
 * a partial match of it (a proper prefix of the needle as their last units), and the automaton's
 * step through one row's value, each in the way its encoding makes cheapest:
 *
 * - a dictionary column tests each distinct entry once and marks rows by their codes (nothing at
 *   all when no entry holds the needle, the usual case);
 * - a plain text column (and raw strings stored as UTF-8) is searched in its stored bytes
 *   (byte-search.ts): no string per row; a row's value is decoded only when a match that crosses
 *   into or out of it has to be followed;
 * - an integer or IPv4 column (digits, `-`, `.`) is not read at all for a needle it cannot hold or
 *   end a partial match of;
 * - anything else (msgpack string arrays, blocks still in memory) is tested value by value.
 */
import type { BlockView } from './block-view.js';
import { asBuffer, hasKelvin, markRows, rawRows, textRows, type ByteRows } from './byte-search.js';
import type { Needle } from './text-match.js';
import { foldUnit } from './casefold.js';
import { decodeNumbers, decodeStrings, type StringColumn } from '../segments/columns.js';
import { LogsvcError } from '../lib/errors.js';

export interface TextColumn {
  /** Sets out[i] = 1 for the rows whose value holds the needle; true when any does. Called first, once. */
  mark(out: Uint8Array): boolean;
  /** Row i's value holds the needle (after `mark`). */
  has(i: number): boolean;
  /** Sets out[i] = 1 for the rows whose value ends in a partial match (after `mark`); true when any does. */
  markCarries(out: Uint8Array): boolean;
  /**
   * False when no row's value can go on with a partial match begun before it (Needle.continues of
   * its first unit; an empty value passes the state on, so it may). Then a partial match that
   * ends in the piece before this one in a raw template goes no further.
   */
  continues(): boolean;
  /** The automaton's state after row i's value, read from state q (`m`: the needle is complete). */
  next(i: number, q: number): number;
  /** Row i's value, null when it has none. */
  value(i: number): string | null;
  /** `re` on row i's value (a dictionary column runs it once per entry). */
  test(i: number, re: RegExp): boolean;
}

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', what);
}

/** Transition table entries one dictionary column may hold (2 bytes each: 512 KiB). */
const MAX_TABLE = 1 << 18;

class DictColumn implements TextColumn {
  private readonly hit: Uint8Array;
  private tails: Int32Array | null = null;
  private tab: Int16Array | Int32Array | null = null;
  private tested: Int8Array | null = null;
  constructor(
    private readonly d: readonly string[],
    private readonly codes: Uint8Array | Uint16Array,
    private readonly nd: Needle,
  ) {
    this.hit = new Uint8Array(d.length);
  }
  mark(out: Uint8Array): boolean {
    const { d, nd, hit, codes } = this;
    let any = false;
    for (let k = 0; k < d.length; k++) {
      if (nd.inside(d[k]!)) {
        hit[k] = 1;
        any = true;
      }
    }
    // Codes past the entries (the absent code, a damaged one) read as undefined: not marked.
    if (any) for (let i = 0; i < out.length; i++) if (hit[codes[i]!] === 1) out[i] = 1;
    return any;
  }
  has(i: number): boolean {
    return this.hit[this.codes[i]!] === 1;
  }
  private tailsOf(): Int32Array {
    if (this.tails !== null) return this.tails;
    const { d, nd, hit } = this;
    const tails = new Int32Array(d.length);
    for (let k = 0; k < d.length; k++) if (hit[k] === 0) tails[k] = nd.tail(d[k]!);
    return (this.tails = tails);
  }
  markCarries(out: Uint8Array): boolean {
    const tails = this.tailsOf();
    if (!tails.some((t) => t > 0)) return false;
    const codes = this.codes;
    for (let i = 0; i < out.length; i++) if (tails[codes[i]!]! > 0) out[i] = 1;
    return true;
  }
  continues(): boolean {
    const nd = this.nd;
    return this.d.some((v) => v.length === 0 || nd.continues(nd.folded ? foldUnit(v.charCodeAt(0)) : v.charCodeAt(0)));
  }
  private code(i: number): number {
    const c = this.codes[i]!;
    if (c >= this.d.length) corrupt(`raw template: event ${i} lacks a piece`);
    return c;
  }
  next(i: number, q: number): number {
    const c = this.code(i);
    const { nd, d } = this;
    if (q === 0) return this.hit[c] === 1 ? nd.m : this.tailsOf()[c]!;
    const m = nd.m;
    if (d.length * m > MAX_TABLE) return nd.through(d[c]!, q);
    const tab = (this.tab ??= (m < 32767 ? new Int16Array(d.length * m) : new Int32Array(d.length * m)).fill(-1));
    const at = c * m + q;
    let t = tab[at]!;
    if (t < 0) tab[at] = t = nd.through(d[c]!, q);
    return t;
  }
  value(i: number): string | null {
    const c = this.codes[i]!;
    return c < this.d.length ? this.d[c]! : null;
  }
  test(i: number, re: RegExp): boolean {
    const c = this.codes[i]!;
    if (c >= this.d.length) return false;
    const tested = (this.tested ??= new Int8Array(this.d.length));
    if (tested[c] === 0) tested[c] = re.test(this.d[c]!) ? 1 : -1;
    return tested[c] === 1;
  }
}

class BytesColumn implements TextColumn {
  private readonly hit: Uint8Array;
  constructor(
    private readonly rows: ByteRows,
    private readonly nd: Needle,
  ) {
    this.hit = new Uint8Array(rows.starts.length - 1);
  }
  mark(out: Uint8Array): boolean {
    const hit = this.hit;
    if (!markRows(this.rows, this.nd, hit)) return false;
    for (let i = 0; i < hit.length; i++) if (hit[i] === 1) out[i] = 1;
    return true;
  }
  has(i: number): boolean {
    return this.hit[i] === 1;
  }
  /** State after row i's value from 0, for a row without the needle: from its bytes when its last m - 1 are ASCII. */
  private tail(i: number): number {
    const { buf, starts } = this.rows;
    const from = starts[i]!;
    const to = starts[i + 1]!;
    const at = Math.max(from, to - (this.nd.m - 1));
    if (!this.rows.ascii) for (let k = at; k < to; k++) if (buf[k]! >= 0x80) return this.nd.tail(this.value(i) ?? '');
    return this.nd.tailOfAscii(buf, at, to);
  }
  markCarries(out: Uint8Array): boolean {
    const { buf, starts } = this.rows;
    const { nd, hit } = this;
    const { endAscii, folded } = nd;
    let any = false;
    for (let i = 0; i < hit.length; i++) {
      const to = starts[i + 1]!;
      if (to === starts[i] || hit[i] === 1) continue;
      let last = buf[to - 1]!;
      if (last < 0x80) {
        if (folded && last >= 65 && last <= 90) last += 32;
        if (endAscii[last] !== 1) continue;
      } else if (nd.ascii) continue; // a unit outside ASCII ends no partial match of an ASCII needle (Kelvin: see bytesOf)
      if (this.tail(i) > 0) {
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  continues(): boolean {
    const { buf, starts, absent } = this.rows;
    const { contAscii, folded, ascii } = this.nd;
    for (let i = 0; i < this.hit.length; i++) {
      const from = starts[i]!;
      if (from === starts[i + 1]) {
        if (absent === null || absent[i] !== 1) return true;
        continue;
      }
      let c = buf[from]!;
      if (c >= 0x80) {
        // Outside ASCII: no unit of an ASCII needle (a Kelvin sign never reaches here: see bytesOf).
        if (!ascii) return true;
        continue;
      }
      if (folded && c >= 65 && c <= 90) c += 32;
      if (contAscii[c] === 1) return true;
    }
    return false;
  }
  next(i: number, q: number): number {
    if (q === 0) return this.hit[i] === 1 ? this.nd.m : this.tail(i);
    return this.nd.through(this.value(i) ?? corrupt(`raw template: event ${i} lacks a piece`), q);
  }
  value(i: number): string | null {
    const { buf, starts, absent, ascii } = this.rows;
    if (absent !== null && absent[i] === 1) return null;
    return buf.toString(ascii ? 'latin1' : 'utf8', starts[i]!, starts[i + 1]!);
  }
  test(i: number, re: RegExp): boolean {
    const v = this.value(i);
    return v !== null && re.test(v);
  }
}

/** Values as strings (already decoded, or made on demand), tested one by one. */
class StringsColumn implements TextColumn {
  private readonly hit: Uint8Array;
  constructor(
    private readonly n: number,
    private readonly at: (i: number) => string | null | undefined,
    private readonly nd: Needle,
    /** False when no value can hold the needle or end in a partial match (then none is read to mark). */
    private readonly searched = true,
    /** The units every value starts with one of (integers and addresses), when known. */
    private readonly first: readonly number[] | null = null,
  ) {
    this.hit = new Uint8Array(n);
  }
  mark(out: Uint8Array): boolean {
    if (!this.searched) return false;
    const { hit, nd, at } = this;
    let any = false;
    for (let i = 0; i < this.n; i++) {
      const v = at(i);
      if (v !== null && v !== undefined && nd.inside(v)) {
        hit[i] = 1;
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  has(i: number): boolean {
    return this.hit[i] === 1;
  }
  markCarries(out: Uint8Array): boolean {
    if (!this.searched) return false;
    const { hit, nd, at } = this;
    let any = false;
    for (let i = 0; i < this.n; i++) {
      if (hit[i] === 1) continue;
      const v = at(i);
      if (v !== null && v !== undefined && nd.tail(v) > 0) {
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  continues(): boolean {
    const { nd, at } = this;
    // An integer or address column not searched is not read: the units its values may start with answer.
    if (this.first !== null) return this.first.some((c) => nd.continues(c));
    for (let i = 0; i < this.n; i++) {
      const v = at(i);
      if (v === null || v === undefined) continue;
      if (v.length === 0 || nd.continues(nd.folded ? foldUnit(v.charCodeAt(0)) : v.charCodeAt(0))) return true;
    }
    return false;
  }
  next(i: number, q: number): number {
    if (q === 0 && !this.searched) return 0;
    const v = this.at(i) ?? corrupt(`raw template: event ${i} lacks a piece`);
    if (q === 0) return this.hit[i] === 1 ? this.nd.m : this.nd.tail(v);
    return this.nd.through(v, q);
  }
  value(i: number): string | null {
    return this.at(i) ?? null;
  }
  test(i: number, re: RegExp): boolean {
    const v = this.at(i);
    return v !== null && v !== undefined && re.test(v);
  }
}

function strings(values: readonly (string | null | undefined)[], nd: Needle): TextColumn {
  return new StringsColumn(values.length, (i) => values[i], nd);
}

/** Bytes searched as bytes when the needle allows (see Needle.bytes), else decoded. */
function bytesOf(rows: ByteRows | null, nd: Needle, decode: () => readonly (string | null | undefined)[]): TextColumn {
  if (rows === null || nd.bytes === null || (nd.kelvin && hasKelvin(rows.buf))) return strings(decode(), nd);
  return new BytesColumn(rows, nd);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const DIGITS = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57];

/**
 * An integer or IPv4 column (every row holds digits, and `-` or `.`): read only when the needle
 * could be in a value or a value (which ends in a digit) could end a partial match of it.
 */
function typed(n: number, nd: Needle, punct: number, text: () => readonly (string | null | undefined)[], one: (i: number) => string): TextColumn {
  const reads = nd.only((c) => isDigit(c) || c === punct) || DIGITS.some((c) => nd.ends(c));
  if (reads) return strings(text(), nd);
  return new StringsColumn(n, one, nd, false, punct === 45 ? [...DIGITS, 45] : DIGITS);
}

/** A stored field's column, or null when the block has no such field. */
export function fieldColumn(view: BlockView, name: string, nd: Needle): TextColumn | null {
  const n = view.n;
  switch (view.encoding(name)) {
    case 'k': {
      const dict = view.dict(name);
      if (dict !== null) return new DictColumn(dict.d, dict.codes, nd);
      break;
    }
    case 'u': {
      const u = view.utf8(name);
      if (u !== null) return bytesOf(textRows(u.b, u.l, n), nd, () => view.field(name) ?? []);
      break;
    }
    case 'i': {
      let ints: readonly number[] | null = null;
      return typed(n, nd, 45 /* - */, () => view.field(name) ?? [], (i) => String((ints ??= view.ints(name) ?? corrupt(`no integer column ${name}`))[i]));
    }
    case '4': {
      let b: Uint8Array | null = null;
      return typed(n, nd, 46 /* . */, () => view.field(name) ?? [], (i) => {
        b ??= view.ipv4(name) ?? corrupt(`no IPv4 column ${name}`);
        const o = i * 4;
        return `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
      });
    }
    default:
      break;
  }
  const col = view.field(name);
  return col === null ? null : strings(col, nd);
}

/** A template gap column (a string column that is not a field). */
export function gapColumn(g: StringColumn, n: number, nd: Needle): TextColumn {
  if (g.e === 'k') {
    if (g.i.byteLength !== n * g.w) corrupt('a dictionary column has the wrong length');
    let codes: Uint8Array | Uint16Array = g.i;
    if (g.w === 2) {
      codes = new Uint16Array(n);
      const b = g.i;
      for (let k = 0; k < n; k++) codes[k] = b[2 * k]! | (b[2 * k + 1]! << 8);
    }
    return new DictColumn(g.d, codes, nd);
  }
  if (g.e === 'u') return bytesOf(textRows(g.b, g.l, n), nd, () => decodeStrings(g, n));
  return strings(decodeStrings(g, n), nd);
}

/** The raw strings of a block whose raw strings are not templates. */
export function rawColumn(view: BlockView, nd: Needle): TextColumn {
  const r = view.rawUtf8();
  if (r === null) return strings(view.raw(), nd);
  return bytesOf(rawRows(asBuffer(r.b), decodeNumbers(r.l, view.n), view.n), nd, () => view.raw());
}
