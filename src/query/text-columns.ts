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
import { asBuffer, hasKelvin, markRows, mayBegin, rawRows, textRows, type ByteRows, type RowLayout } from './byte-search.js';
import type { Needle } from './text-match.js';
import type { ColumnRead, DictBytes } from './text-bytes.js';
import { foldUnit } from './casefold.js';
import { decodeNumbers, decodeStrings } from '../segments/columns.js';
import { LogsvcError } from '../lib/errors.js';
import { byteSetOf, needleIn } from './seen-bytes.js';
import type { GapTexts, TemplateHead } from './template-heads.js';

export interface TextColumn {
  /** Sets out[i] = 1 for the rows whose value holds the needle; true when any does. Called first, once. */
  mark(out: Uint8Array): boolean;
  /** Row i's value holds the needle (after `mark`). */
  has(i: number): boolean;
  /** False when no row's value can end in a partial match (a cheap look: true is only "may"). */
  mayCarry(): boolean;
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

/** A dictionary's distinct entries, as decoded strings or as bytes in their frame (text-bytes.ts). */
interface Entries {
  readonly count: number;
  text(k: number): string;
  /** Per entry 1 when it holds the needle; null when none does. */
  hits(nd: Needle): Uint8Array | null;
  /** The state after entry k from state 0, for an entry without the needle. */
  tail(nd: Needle, k: number): number;
  /** Some entry may go on with a partial match begun before it (TextColumn.continues). */
  continues(nd: Needle): boolean;
}

class StringEntries implements Entries {
  constructor(private readonly d: readonly string[]) {}
  get count(): number {
    return this.d.length;
  }
  text(k: number): string {
    return this.d[k]!;
  }
  hits(nd: Needle): Uint8Array | null {
    const d = this.d;
    let hit: Uint8Array | null = null;
    for (let k = 0; k < d.length; k++) if (nd.inside(d[k]!)) (hit ??= new Uint8Array(d.length))[k] = 1;
    return hit;
  }
  tail(nd: Needle, k: number): number {
    return nd.tail(this.d[k]!);
  }
  continues(nd: Needle): boolean {
    return this.d.some((v) => v.length === 0 || nd.continues(nd.folded ? foldUnit(v.charCodeAt(0)) : v.charCodeAt(0)));
  }
}

/**
 * Entries still bytes: searched as one run, their last and first bytes read for partial matches,
 * decoded one by one only where text is needed (all of them, as strings, when the needle cannot
 * be searched as bytes: see bytesOf).
 */
class ByteEntries implements Entries {
  private asText: StringEntries | null | undefined = undefined;
  constructor(private readonly e: DictBytes) {}
  get count(): number {
    return this.e.count;
  }
  text(k: number): string {
    return this.e.text(k);
  }
  private decoded(nd: Needle): StringEntries | null {
    if (this.asText === undefined) {
      const e = this.e;
      const bytes = nd.bytes !== null && !(nd.kelvin && hasKelvin(e.rows.buf));
      this.asText = bytes ? null : new StringEntries(Array.from({ length: e.count }, (_, k) => e.text(k)));
    }
    return this.asText;
  }
  hits(nd: Needle): Uint8Array | null {
    const t = this.decoded(nd);
    if (t !== null) return t.hits(nd);
    let hit: Uint8Array | null = null;
    // The layout is always known (the entries' ranges), so the answer is never null.
    markRows(this.e.rows, nd, () => (hit = new Uint8Array(this.e.count)));
    return hit;
  }
  tail(nd: Needle, k: number): number {
    const t = this.decoded(nd);
    if (t !== null) return t.tail(nd, k);
    const { starts, ends, rows } = this.e;
    const buf = rows.buf;
    const to = ends[k]!;
    if (to === starts[k]) return 0;
    let last = buf[to - 1]!;
    if (last < 0x80) {
      if (nd.folded && last >= 65 && last <= 90) last += 32;
      if (nd.endAscii[last] !== 1) return 0;
    } else if (nd.ascii) return 0; // no Kelvin sign here (see decoded)
    const at = Math.max(starts[k]!, to - (nd.m - 1));
    for (let x = at; x < to; x++) if (buf[x]! >= 0x80) return nd.tail(this.e.text(k));
    return nd.tailOfAscii(buf, at, to);
  }
  continues(nd: Needle): boolean {
    const t = this.decoded(nd);
    if (t !== null) return t.continues(nd);
    const { starts, ends, rows } = this.e;
    const buf = rows.buf;
    for (let k = 0; k < this.e.count; k++) {
      const from = starts[k]!;
      if (from === ends[k]) return true;
      let c = buf[from]!;
      // Outside ASCII: no unit of an ASCII needle (no Kelvin sign here: see decoded); else decoded.
      if (c >= 0x80) {
        if (!nd.ascii && nd.continues(nd.folded ? foldUnit(this.e.text(k).charCodeAt(0)) : this.e.text(k).charCodeAt(0))) return true;
        continue;
      }
      if (nd.folded && c >= 65 && c <= 90) c += 32;
      if (nd.continues(c)) return true;
    }
    return false;
  }
}

/** A dictionary's codes, or how to read them when first needed (a format 6 block's from its frame: read only when an entry matters). */
type Codes = Uint8Array | Uint16Array | (() => Uint8Array | Uint16Array);

class DictColumn implements TextColumn {
  /** Per entry: it holds the needle (null: none does). Arrays made only when needed: most columns of most blocks need none. */
  private hit: Uint8Array | null = null;
  private readCodes: Codes;
  /** Per entry: the state after it from 0 (null: 0 for all; undefined: not known yet). */
  private tails: Int32Array | null | undefined = undefined;
  private tab: Int16Array | Int32Array | null = null;
  private tested: Int8Array | null = null;
  private readonly count: number;
  constructor(
    private readonly d: Entries,
    codes: Codes,
    private readonly nd: Needle,
  ) {
    this.count = d.count;
    this.readCodes = codes;
  }
  /** The codes, read on first use (a column whose entries none holds the needle nor ends a partial match never reads them). */
  private get codes(): Uint8Array | Uint16Array {
    const c = this.readCodes;
    return typeof c === 'function' ? (this.readCodes = c()) : c;
  }
  mark(out: Uint8Array): boolean {
    const hit = this.d.hits(this.nd);
    if (hit === null) return false;
    this.hit = hit;
    const codes = this.codes;
    // Codes past the entries (the absent code, a damaged one) read as undefined: not marked.
    for (let i = 0; i < out.length; i++) if (hit[codes[i]!] === 1) out[i] = 1;
    return true;
  }
  has(i: number): boolean {
    return this.hit !== null && this.hit[this.codes[i]!] === 1;
  }
  private tailsOf(): Int32Array | null {
    if (this.tails !== undefined) return this.tails;
    const { d, nd, hit, count } = this;
    let tails: Int32Array | null = null;
    for (let k = 0; k < count; k++) {
      if (hit !== null && hit[k] === 1) continue;
      const t = d.tail(nd, k);
      if (t > 0) (tails ??= new Int32Array(count))[k] = t;
    }
    return (this.tails = tails);
  }
  mayCarry(): boolean {
    return this.tailsOf() !== null;
  }
  markCarries(out: Uint8Array): boolean {
    const tails = this.tailsOf();
    if (tails === null) return false;
    const codes = this.codes;
    for (let i = 0; i < out.length; i++) if (tails[codes[i]!]! > 0) out[i] = 1;
    return true;
  }
  continues(): boolean {
    return this.d.continues(this.nd);
  }
  private code(i: number): number {
    const c = this.codes[i]!;
    if (c >= this.count) corrupt(`raw template: event ${i} lacks a piece`);
    return c;
  }
  next(i: number, q: number): number {
    const c = this.code(i);
    const { nd, d, count } = this;
    if (q === 0) return this.hit !== null && this.hit[c] === 1 ? nd.m : (this.tailsOf()?.[c] ?? 0);
    const m = nd.m;
    if (count * m > MAX_TABLE) return nd.through(d.text(c), q);
    const tab = (this.tab ??= (m < 32767 ? new Int16Array(count * m) : new Int32Array(count * m)).fill(-1));
    const at = c * m + q;
    let t = tab[at]!;
    if (t < 0) tab[at] = t = nd.through(d.text(c), q);
    return t;
  }
  value(i: number): string | null {
    const c = this.codes[i]!;
    return c < this.count ? this.d.text(c) : null;
  }
  test(i: number, re: RegExp): boolean {
    const c = this.codes[i]!;
    if (c >= this.count) return false;
    const tested = (this.tested ??= new Int8Array(this.count));
    if (tested[c] === 0) tested[c] = re.test(this.d.text(c)) ? 1 : -1;
    return tested[c] === 1;
  }
}

class BytesColumn implements TextColumn {
  /** 1 for the rows holding the needle (made on the first). */
  private hit: Uint8Array | null = null;
  /** The values decoded, once the run turned out not to be cut into rows as bytes (see textRows). */
  private decoded: TextColumn | null = null;
  /** Some byte of the run may begin a partial match (byte-search.ts mayBegin; undefined: not looked yet). */
  private begins: boolean | undefined = undefined;
  constructor(
    private readonly rows: ByteRows,
    private readonly n: number,
    private readonly nd: Needle,
    private readonly decode: () => readonly (string | null | undefined)[],
  ) {}
  /** The rows' layout, or null when the column is read decoded instead (`decoded` is then set). */
  private layout(): RowLayout | null {
    if (this.decoded !== null) return null;
    const layout = this.rows.layout();
    if (layout === null) {
      this.decoded = strings(this.decode(), this.nd);
      this.decoded.mark(new Uint8Array(this.n));
    }
    return layout;
  }
  mark(out: Uint8Array): boolean {
    const found = markRows(this.rows, this.nd, () => (this.hit = new Uint8Array(this.n)));
    if (found === null) return this.layout() === null && this.decoded!.mark(out);
    if (!found) return false;
    const hit = this.hit!;
    for (let i = 0; i < hit.length; i++) if (hit[i] === 1) out[i] = 1;
    return true;
  }
  has(i: number): boolean {
    return this.decoded === null ? this.hit !== null && this.hit[i] === 1 : this.decoded.has(i);
  }
  mayCarry(): boolean {
    return (this.begins ??= mayBegin(this.rows.buf, this.nd));
  }
  /** State after row i's value from 0, for a row without the needle: from its bytes when its last m - 1 are ASCII. */
  private tail(i: number, { starts, ascii }: RowLayout): number {
    const buf = this.rows.buf;
    const from = starts[i]!;
    const to = starts[i + 1]!;
    const at = Math.max(from, to - (this.nd.m - 1));
    if (!ascii) for (let k = at; k < to; k++) if (buf[k]! >= 0x80) return this.nd.tail(this.value(i) ?? '');
    return this.nd.tailOfAscii(buf, at, to);
  }
  markCarries(out: Uint8Array): boolean {
    if (!this.mayCarry()) return false;
    const layout = this.layout();
    if (layout === null) return this.decoded!.markCarries(out);
    const { starts } = layout;
    const buf = this.rows.buf;
    const { nd, hit } = this;
    const { endAscii, folded } = nd;
    let any = false;
    for (let i = 0; i < this.n; i++) {
      const to = starts[i + 1]!;
      if (to === starts[i] || (hit !== null && hit[i] === 1)) continue;
      let last = buf[to - 1]!;
      if (last < 0x80) {
        if (folded && last >= 65 && last <= 90) last += 32;
        if (endAscii[last] !== 1) continue;
      } else if (nd.ascii) continue; // a unit outside ASCII ends no partial match of an ASCII needle (Kelvin: see bytesOf)
      if (this.tail(i, layout) > 0) {
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  continues(): boolean {
    const layout = this.layout();
    if (layout === null) return this.decoded!.continues();
    const { starts, absent } = layout;
    const buf = this.rows.buf;
    const { contAscii, folded, ascii } = this.nd;
    for (let i = 0; i < this.n; i++) {
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
    const layout = this.layout();
    if (layout === null) return this.decoded!.next(i, q);
    const { nd, hit } = this;
    if (q > 0) {
      const { starts, absent } = layout;
      const buf = this.rows.buf;
      if (absent !== null && absent[i] === 1) corrupt(`raw template: event ${i} lacks a piece`);
      const from = starts[i]!;
      const to = starts[i + 1]!;
      const head = Math.min(to, from + nd.m - 1);
      let ascii = layout.ascii;
      if (!ascii) for (let k = from; k < head && (ascii = buf[k]! < 0x80); k++);
      if (!ascii) return nd.through(this.value(i) ?? corrupt(`raw template: event ${i} lacks a piece`), q);
      const r = nd.stepAscii(buf, from, to, q);
      if (r >= 0) return r;
    }
    return hit !== null && hit[i] === 1 ? nd.m : this.tail(i, layout);
  }
  value(i: number): string | null {
    const layout = this.layout();
    if (layout === null) return this.decoded!.value(i);
    const { starts, absent, ascii } = layout;
    if (absent !== null && absent[i] === 1) return null;
    return this.rows.buf.toString(ascii ? 'latin1' : 'utf8', starts[i]!, starts[i + 1]!);
  }
  test(i: number, re: RegExp): boolean {
    const v = this.value(i);
    return v !== null && re.test(v);
  }
}

/** Values decoded as strings, tested one by one. */
class StringsColumn implements TextColumn {
  /** 1 for the rows holding the needle (made on the first). */
  private hit: Uint8Array | null = null;
  constructor(
    private readonly values: readonly (string | null | undefined)[],
    private readonly nd: Needle,
  ) {}
  mark(out: Uint8Array): boolean {
    const { nd, values } = this;
    let hit: Uint8Array | null = null;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v !== null && v !== undefined && nd.inside(v)) {
        (hit ??= new Uint8Array(values.length))[i] = 1;
        out[i] = 1;
      }
    }
    this.hit = hit;
    return hit !== null;
  }
  has(i: number): boolean {
    return this.hit !== null && this.hit[i] === 1;
  }
  mayCarry(): boolean {
    return true;
  }
  markCarries(out: Uint8Array): boolean {
    const { hit, nd, values } = this;
    let any = false;
    for (let i = 0; i < values.length; i++) {
      if (hit !== null && hit[i] === 1) continue;
      const v = values[i];
      if (v !== null && v !== undefined && nd.tail(v) > 0) {
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  continues(): boolean {
    const nd = this.nd;
    return this.values.some((v) => v !== null && v !== undefined && (v.length === 0 || nd.continues(nd.folded ? foldUnit(v.charCodeAt(0)) : v.charCodeAt(0))));
  }
  next(i: number, q: number): number {
    const v = this.values[i] ?? corrupt(`raw template: event ${i} lacks a piece`);
    if (q === 0) return this.has(i) ? this.nd.m : this.nd.tail(v);
    return this.nd.through(v, q);
  }
  value(i: number): string | null {
    return this.values[i] ?? null;
  }
  test(i: number, re: RegExp): boolean {
    const v = this.values[i];
    return v !== null && v !== undefined && re.test(v);
  }
}

/**
 * An integer or IPv4 column whose values cannot hold the needle (not every unit of it is a digit
 * or the column's `-` or `.`): nothing to mark, and a value (which ends in a digit) ends a partial
 * match only when its last digit is one of the needle's first m - 1 units; only those rows' text
 * is made, from the numbers.
 */
class NumbersColumn implements TextColumn {
  /** Per digit: it is one of the needle's first m - 1 units. */
  private readonly ends: boolean[];
  private readonly anyEnd: boolean;
  constructor(
    private readonly n: number,
    private readonly nd: Needle,
    private readonly one: (i: number) => string,
    private readonly lastDigit: (i: number) => number,
    /** The units a value may start with. */
    private readonly first: readonly number[],
    /** The column's one unit besides digits (`-` or `.`). */
    punct: number,
  ) {
    // A partial match at a value's end is a suffix of it, so starts with a digit or `punct`.
    const u0 = nd.u[0]!;
    const starts = isDigit(u0) || u0 === punct;
    this.ends = DIGITS.map((c) => starts && nd.ends(c));
    this.anyEnd = this.ends.includes(true);
  }
  mark(): boolean {
    return false;
  }
  has(): boolean {
    return false;
  }
  mayCarry(): boolean {
    return this.anyEnd;
  }
  markCarries(out: Uint8Array): boolean {
    if (!this.anyEnd) return false;
    let any = false;
    for (let i = 0; i < this.n; i++) {
      if (this.next(i, 0) > 0) {
        out[i] = 1;
        any = true;
      }
    }
    return any;
  }
  continues(): boolean {
    return this.first.some((c) => this.nd.continues(c));
  }
  next(i: number, q: number): number {
    if (q > 0) return this.nd.through(this.one(i), q);
    // Not read at all when no value can end a partial match.
    return this.anyEnd && this.ends[this.lastDigit(i)] === true ? this.nd.tail(this.one(i)) : 0;
  }
  value(i: number): string | null {
    return this.one(i);
  }
  test(i: number, re: RegExp): boolean {
    return re.test(this.one(i));
  }
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const DIGITS = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57];

function strings(values: readonly (string | null | undefined)[], nd: Needle): TextColumn {
  return new StringsColumn(values, nd);
}

/** Bytes searched as bytes when the needle allows (see Needle.bytes), else decoded. */
function bytesOf(rows: ByteRows, n: number, nd: Needle, decode: () => readonly (string | null | undefined)[]): TextColumn {
  if (nd.bytes === null || (nd.kelvin && hasKelvin(rows.buf))) return strings(decode(), nd);
  return new BytesColumn(rows, n, nd, decode);
}

/** A stored field's column, or null when the block has no such field. */
export function fieldColumn(view: BlockView, name: string, nd: Needle): TextColumn | null {
  const n = view.n;
  switch (view.encoding(name)) {
    case 'k': {
      // Formats 5 and 6: the entries searched where they lie in the frame (text-bytes.ts); a format 6
      // dictionary summarised in the head (entries there, codes in the frame) decoded as below.
      const read = view.columnRead(name);
      if (read?.dict !== undefined) return new DictColumn(new ByteEntries(read.dict), read.dict.codes, nd);
      // Format 6, entries in the head: the frame of codes read only if an entry matters.
      const entries = view.dictEntries(name);
      if (entries !== null) {
        headDicts.made++;
        return new DictColumn(new StringEntries(entries), () => (headDicts.read++, view.dict(name)?.codes ?? corrupt(`no dictionary column ${name}`)), nd);
      }
      const dict = view.dict(name);
      if (dict !== null) return new DictColumn(new StringEntries(dict.d), dict.codes, nd);
      break;
    }
    case 'u': {
      const u = view.utf8(name);
      if (u !== null) return bytesOf(textRows(u.b, u.l, n), n, nd, () => view.field(name) ?? []);
      break;
    }
    case 'i': {
      if (nd.only((c) => isDigit(c) || c === 45 /* - */)) break;
      // Read only if a row's text is asked for (format 5: the column's frame is not read otherwise).
      let ints: readonly number[] | null = null;
      const at = (i: number): number => (ints ??= view.ints(name) ?? corrupt(`no integer column ${name}`))[i]!;
      return new NumbersColumn(n, nd, (i) => String(at(i)), (i) => Math.abs(at(i)) % 10, [...DIGITS, 45], 45);
    }
    case '4': {
      if (nd.only((c) => isDigit(c) || c === 46 /* . */)) break;
      let b: Uint8Array | null = null;
      const at = (i: number): Uint8Array => (b ??= view.ipv4(name) ?? corrupt(`no IPv4 column ${name}`));
      const text = (i: number): string => {
        const x = at(i);
        return `${x[i * 4]}.${x[i * 4 + 1]}.${x[i * 4 + 2]}.${x[i * 4 + 3]}`;
      };
      return new NumbersColumn(n, nd, text, (i) => at(i)[i * 4 + 3]! % 10, DIGITS, 46);
    }
    default:
      break;
  }
  const col = view.field(name);
  return col === null ? null : strings(col, nd);
}

/** Dictionaries searched from the entries in their block's head, and of them the ones whose codes were read (tests check both). */
export const headDicts = { made: 0, read: 0 };

/** Columns left unread, of them dictionaries, and of all read after all (tests check each happens). */
export const unreadCounts = { made: 0, dicts: 0, read: 0 };

/**
 * A text column whose bytes, seen by an earlier search of this block (seen-bytes.ts), cannot hold
 * the needle: no row holds it (nothing is marked), and it is read only when asked about partial
 * matches across its template cuts (`continues`, `markCarries`) or a row's value (`next`, `value`,
 * `test`). `some`: it holds some byte of the needle (without one, no value ends in a partial match).
 */
class UnreadColumn implements TextColumn {
  private col: TextColumn | null = null;
  constructor(
    private readonly open: () => TextColumn | null,
    private readonly n: number,
    private readonly some: boolean,
    private readonly name: string,
  ) {
    unreadCounts.made++;
  }
  read(): TextColumn {
    if (this.col !== null) return this.col;
    unreadCounts.read++;
    const col = this.open() ?? corrupt(`no field column ${this.name}`);
    // The column's own state after its first call (has, tails), and a check of the set.
    if (col.mark(new Uint8Array(this.n))) throw new LogsvcError('E_INTERNAL', `text column ${this.name} holds a needle its bytes ruled out`);
    return (this.col = col);
  }
  mark(): boolean {
    return false;
  }
  has(): boolean {
    return false;
  }
  mayCarry(): boolean {
    return this.some;
  }
  markCarries(out: Uint8Array): boolean {
    return this.some && this.read().markCarries(out);
  }
  continues(): boolean {
    return this.read().continues();
  }
  next(i: number, q: number): number {
    return this.read().next(i, q);
  }
  value(i: number): string | null {
    return this.read().value(i);
  }
  test(i: number, re: RegExp): boolean {
    return this.read().test(i, re);
  }
}

/** `col`, read now if it was left unread (for loops over many rows: no call through the wrapper each time). */
export function readColumn(col: TextColumn): TextColumn {
  return col instanceof UnreadColumn ? col.read() : col;
}

/**
 * fieldColumn, for a block whose text columns' byte values are kept (BlockView.seen): a UTF-8 text
 * column (`u`), or a dictionary (`k`) whose entries lie in its frame, that cannot hold the needle
 * is not read (UnreadColumn); one read has its bytes noted (a dictionary's: its entries' run, the
 * msgpack headers between them included, a superset that can only let more through). A dictionary
 * summarised in the head is searched there without its frame and needs no set.
 */
export function searchedColumn(view: BlockView, name: string, nd: Needle): TextColumn | null {
  const seen = view.seen;
  const enc = seen === null ? '' : view.encoding(name);
  if (seen === null || (enc !== 'u' && enc !== 'k')) return fieldColumn(view, name, nd);
  const set = seen.get(name);
  if (set !== undefined) {
    const { whole, some } = needleIn(set, nd);
    if (!whole) {
      if (enc === 'k') unreadCounts.dicts++;
      return new UnreadColumn(() => fieldColumn(view, name, nd), view.n, some, name);
    }
  }
  const col = fieldColumn(view, name, nd);
  if (set === undefined) {
    const b = enc === 'u' ? view.utf8(name)?.b : view.columnRead(name)?.dict?.rows.buf;
    if (b !== undefined) seen.put(name, byteSetOf(b));
  }
  return col;
}

/** A template gap column (a string column that is not a field), decoded or still bytes. */
export function gapColumn(read: ColumnRead, n: number, nd: Needle): TextColumn {
  if (read.dict !== undefined) return new DictColumn(new ByteEntries(read.dict), read.dict.codes, nd);
  const g = read.col;
  if (g.e === 'k') return new DictColumn(new StringEntries(g.d), gapCodes(read, n), nd);
  if (g.e === 'u') return bytesOf(textRows(g.b, g.l, n), n, nd, () => decodeStrings(g, n));
  return strings(decodeStrings(g, n), nd);
}

/** A dictionary gap column's codes (a byte or two a row). */
export function gapCodes(read: ColumnRead, n: number): Uint8Array | Uint16Array {
  if (read.dict !== undefined) return read.dict.codes;
  const g = read.col;
  if (g.e !== 'k') return corrupt('raw template: a kept dictionary gap is no longer one');
  if (g.i.byteLength !== n * g.w) corrupt('a dictionary column has the wrong length');
  if (g.w !== 2) return g.i;
  const codes = new Uint16Array(n);
  const b = g.i;
  for (let k = 0; k < n; k++) codes[k] = b[2 * k]! | (b[2 * k + 1]! << 8);
  return codes;
}

/** A gap column's entries as texts, null when it is not a dictionary (template-heads.ts keeps them). */
export function gapEntries(read: ColumnRead): readonly string[] | null {
  if (read.dict !== undefined) {
    const d = read.dict;
    return Array.from({ length: d.count }, (_, k) => d.text(k));
  }
  return read.col.e === 'k' ? read.col.d : null;
}

/** A gap's entries from a kept template head: texts of the thread's table, each judged once per needle there. */
class KeptEntries implements Entries {
  constructor(
    private readonly texts: GapTexts,
    private readonly entries: Uint16Array,
    private readonly from: number,
    readonly count: number,
  ) {}
  text(k: number): string {
    return this.texts.texts[this.entries[this.from + k]!]!;
  }
  hits(nd: Needle): Uint8Array | null {
    let hit: Uint8Array | null = null;
    for (let k = 0; k < this.count; k++) if (this.texts.holds(nd, this.entries[this.from + k]!)) (hit ??= new Uint8Array(this.count))[k] = 1;
    return hit;
  }
  tail(nd: Needle, k: number): number {
    return this.texts.tail(nd, this.entries[this.from + k]!);
  }
  continues(nd: Needle): boolean {
    for (let k = 0; k < this.count; k++) if (this.texts.goesOn(nd, this.entries[this.from + k]!)) return true;
    return false;
  }
}

/** Gap g of a kept template head (template-heads.ts); its codes read with `codes` when first needed. */
export function keptGapColumn(texts: GapTexts, head: TemplateHead, g: number, codes: () => Uint8Array | Uint16Array, nd: Needle): TextColumn {
  const from = head.starts[g]!;
  return new DictColumn(new KeptEntries(texts, head.entries, from, head.starts[g + 1]! - from), codes, nd);
}

/** The raw strings of a block whose raw strings are not templates. */
export function rawColumn(view: BlockView, nd: Needle): TextColumn {
  const r = view.rawUtf8();
  if (r === null) return strings(view.raw(), nd);
  return bytesOf(rawRows(asBuffer(r.b), () => decodeNumbers(r.l, view.n), view.n), view.n, nd, () => view.raw());
}
