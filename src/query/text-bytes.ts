/**
 * Block columns read from their msgpack in place, for text search (issue 19): a dictionary
 * column's entries stay bytes inside their frame and are searched there as one run (byte-search.ts;
 * an entry becomes a string only when its text is needed: a regex, a match to follow across a
 * template cut), and a templated raw column's gap columns are found without decoding the rest of
 * it. msgpack decoding every entry of every column into strings was ~15 % of a free-text scan of
 * the JSON set (bench/scan, docs/benchmarks.md 2026-11-28). Format 5 and 6 blocks only (their
 * columns are kept as bytes: EncodedBlock.bytes); other blocks, and a format 6 dictionary whose
 * entries are in the head's summary (at most 64 of them, already strings), are read decoded.
 */
import { ByteRows, type RowLayout } from './byte-search.js';
import { unpack } from '../lib/msgpack.js';
import { LogsvcError } from '../lib/errors.js';
import { decodeNumbers, type NumberColumn, type StringColumn } from '../segments/columns.js';
import { stringRows, type RowReader } from '../segments/column-rows.js';
import { msgpackHeader, msgpackSkip } from '../segments/frames.js';
import { isAscii } from 'node:buffer';

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', `column: ${what}`);
}

const isArray = (x: number): boolean => (x >= 0x90 && x <= 0x9f) || x === 0xdc || x === 0xdd;
const isMap = (x: number): boolean => (x >= 0x80 && x <= 0x8f) || x === 0xde || x === 0xdf;

/** The bytes of the bin at `p`. */
function bin(b: Buffer, p: number, what: string): Buffer {
  const x = b[p];
  const head = x === 0xc4 ? 2 : x === 0xc5 ? 3 : x === 0xc6 ? 5 : corrupt(`${what} is not bytes`);
  const len = head === 2 ? b[p + 1]! : head === 3 ? b.readUInt16BE(p + 1) : b.readUInt32BE(p + 1);
  if (p + head + len > b.length) corrupt(`${what} ends early`);
  return b.subarray(p + head, p + head + len);
}

/** The length of the string whose header `strHead` read last. */
let strLength = 0;

/** The header length of the string at `p` (0: not a string); its length goes to `strLength`. */
function strHead(b: Buffer, p: number): number {
  const x = b[p]!;
  if (x >= 0xa0 && x <= 0xbf) {
    strLength = x & 0x1f;
    return 1;
  }
  if (x === 0xd9) {
    strLength = b[p + 1]!;
    return 2;
  }
  if (x === 0xda) {
    strLength = b.readUInt16BE(p + 1);
    return 3;
  }
  if (x === 0xdb) {
    strLength = b.readUInt32BE(p + 1);
    return 5;
  }
  return 0;
}

/** Where the string `key` read last ends. */
let keyEnd = 0;

/**
 * The short ASCII string (a key, an encoding letter) at `p` as a number, its units' codes in
 * base 256 (`k` is 0x6b, `li` 0x6c69; -1 for longer ones): no string made. Where it ends goes to `keyEnd`.
 */
function key(b: Buffer, p: number): number {
  const head = strHead(b, p);
  if (head === 0) corrupt(`no string at ${p}`);
  const from = p + head;
  keyEnd = from + strLength;
  if (strLength === 1) return b[from]!;
  if (strLength === 2) return (b[from]! << 8) | b[from + 1]!;
  return -1;
}

const E = 0x65;
const D = 0x64;
const I = 0x69;
const W = 0x77;
const T = 0x74;
const G = 0x67;
const K = 0x6b;
const LI = 0x6c69;

/** How many members the map at `p` has, and where the first starts. */
function mapAt(b: Buffer, p: number): { kids: number; next: number } {
  if (!isMap(b[p]!)) corrupt(`no map at ${p}`);
  const h = msgpackHeader(b, p);
  return { kids: h.kids / 2, next: p + h.head };
}

/** A dictionary column's entries as byte ranges of one run (the array's bytes: headers between them). */
export class DictBytes {
  private readonly texts: (string | undefined)[];
  constructor(
    readonly rows: ByteRows,
    readonly starts: Int32Array,
    readonly ends: Int32Array,
    readonly codes: Uint8Array | Uint16Array,
  ) {
    this.texts = new Array(starts.length - 1);
  }
  get count(): number {
    return this.starts.length - 1;
  }
  /** Entry k's text (decoded on first need). */
  text(k: number): string {
    let s = this.texts[k];
    if (s === undefined) this.texts[k] = s = this.rows.buf.toString('utf8', this.starts[k]!, this.ends[k]!);
    return s;
  }
}

/**
 * The column map at `p`: a dictionary's entries and codes read in place (one pass, nothing
 * decoded), null for another encoding; and where the map ends.
 */
function columnAt(b: Buffer, p: number, n: number): { dict: DictBytes | null; end: number } {
  const m = mapAt(b, p);
  let q = m.next;
  let e = -1;
  let region = -1;
  let starts: Int32Array | null = null;
  let ends: Int32Array | null = null;
  let codesAt = -1;
  let width = 0;
  for (let k = 0; k < m.kids; k++) {
    const name = key(b, q);
    q = keyEnd;
    if (name === E) {
      e = key(b, q);
      q = keyEnd;
    } else if (name === D && isArray(b[q]!)) {
      const h = msgpackHeader(b, q);
      q += h.head;
      region = q;
      starts = new Int32Array(h.kids + 1);
      ends = new Int32Array(h.kids);
      for (let j = 0; j < h.kids; j++) {
        const head = strHead(b, q);
        if (head === 0) corrupt('a dictionary entry that is not a string');
        starts[j] = q + head - region;
        q += head + strLength;
        ends[j] = q - region;
      }
      if (q > b.length) corrupt('a dictionary ends early');
      starts[h.kids] = q - region;
    } else {
      if (name === I) codesAt = q;
      else if (name === W) width = b[q]!;
      q = msgpackSkip(b, q);
    }
  }
  if (e !== K) return { dict: null, end: q };
  if (starts === null || ends === null || codesAt < 0) corrupt('a dictionary without entries or codes');
  const i = bin(b, codesAt, 'dictionary codes');
  if ((width !== 1 && width !== 2) || i.length !== n * width) corrupt('dictionary codes of the wrong width or length');
  let codes: Uint8Array | Uint16Array = i;
  if (width === 2) {
    codes = new Uint16Array(n);
    for (let k = 0; k < n; k++) codes[k] = i[2 * k]! | (i[2 * k + 1]! << 8);
  }
  const run = b.subarray(region, region + starts[starts.length - 1]!);
  const layout: RowLayout = { starts, ends, absent: null, ascii: isAscii(run) };
  return { dict: new DictBytes(new ByteRows(run, () => layout), starts, ends, codes), end: q };
}

/**
 * Row by row what `stringRows` gives for the column (a dictionary's code 255, or 65535 when two
 * bytes wide: none): a dictionary's entry becomes a string only when a row asks for it, not every
 * entry of the column for one row (a rare token's matched rows; issue 19).
 */
export function readRows(read: ColumnRead, n: number): RowReader {
  if (read.dict === undefined) return stringRows(read.col, n);
  const d = read.dict;
  const codes = d.codes;
  const none = codes instanceof Uint16Array ? 65535 : 255;
  return (i) => {
    const k = codes[i]!;
    return k === none || k >= d.count ? null : d.text(k);
  };
}

/** A column read in place when it is a dictionary, else decoded as usual. */
export type ColumnRead = { dict: DictBytes; col?: undefined } | { dict?: undefined; col: StringColumn };

/** A stored field's column from its msgpack bytes (EncodedBlock.bytes). */
export function columnFromBytes(b: Buffer, n: number): ColumnRead {
  const { dict } = columnAt(b, 0, n);
  return dict !== null ? { dict } : { col: unpack(b) as StringColumn };
}

/** A templated raw column read from its bytes: the layouts, each row's layout number when asked, the gap columns. */
export interface TemplateRead {
  layouts: number[][];
  ids: () => number[];
  gaps: ColumnRead[];
}

/** A templated raw column (`{e: "t", t, li, g}`) from its msgpack bytes: gaps in place, layouts decoded, layout numbers on first need. */
export function templateFromBytes(b: Buffer, n: number): TemplateRead | null {
  const m = mapAt(b, 0);
  let q = m.next;
  let e = -1;
  let t = -1;
  let li = -1;
  let g = -1;
  let tEnd = -1;
  let liEnd = -1;
  const gaps: ColumnRead[] = [];
  for (let k = 0; k < m.kids; k++) {
    const name = key(b, q);
    q = keyEnd;
    if (name === G && isArray(b[q]!)) {
      g = q;
      // The gaps read while walking past them: each dictionary's entries are walked once.
      const gh = msgpackHeader(b, q);
      q += gh.head;
      for (let j = 0; j < gh.kids; j++) {
        const { dict, end } = columnAt(b, q, n);
        gaps.push(dict !== null ? { dict } : { col: unpack(b.subarray(q, end)) as StringColumn });
        q = end;
      }
      continue;
    }
    const end = msgpackSkip(b, q);
    if (name === E) e = key(b, q);
    else if (name === T) [t, tEnd] = [q, end];
    else if (name === LI) [li, liEnd] = [q, end];
    q = end;
  }
  if (e !== T) return null;
  if (t < 0 || li < 0 || g < 0) corrupt('a raw template without layouts or gaps');
  const layouts = unpack(b.subarray(t, tEnd)) as number[][];
  if (!Array.isArray(layouts)) corrupt('raw template layouts are not a list');
  return { layouts, ids: () => decodeNumbers(unpack(b.subarray(li, liEnd)) as NumberColumn, n), gaps };
}
