/**
 * Format 5 block bodies: each column its own frame (msgpack of the column, LZ4-compressed unless
 * that does not make it smaller) with its own CRC-32C, listed in a column directory after the
 * block header, so a query reads, checks and decompresses only the columns it asks for (issue 19).
 * Byte layout in docs/formats/segment.md.
 *
 * Both block builders (JavaScript and native) make one msgpack body map; `splitBody` walks its
 * structure (headers only, no value decoded but the column names and encodings) to cut it into
 * the column frames, so the builders themselves do not change.
 *
 * `EncodedBlock` is how readers see a block's encoded columns whatever its format: the one
 * decoded body map of formats 1 to 4, or format 5 frames loaded on first use.
 */
import { LogsvcError } from '../lib/errors.js';
import { unpack } from '../lib/msgpack.js';
import { crc32c } from '../storage/index.js';
import type { BlockCodec } from './codec.js';
import type { NumberColumn, RawColumn, StringColumn } from './columns.js';

/** The built-in columns of a body, in frame order (fields follow them). */
export const BUILTIN_COLUMNS = ['ts', 'tz', 'raw', 'it', 'off', 'idx'] as const;
export type BuiltinColumn = (typeof BUILTIN_COLUMNS)[number];

/** A decompressed body of formats 1 to 4: one entry per column (docs/formats/segment.md). */
export interface BlockBody {
  n: number;
  ts: NumberColumn;
  tz: StringColumn;
  raw: RawColumn;
  it: NumberColumn;
  off: NumberColumn;
  idx: NumberColumn;
  fields: [string, StringColumn][];
}

/** One column of a format 5 block as its directory lists it. */
export interface ColumnEntry {
  /** A field column (else a built-in: BUILTIN_COLUMNS). */
  field: boolean;
  name: string;
  /** The column's encoding letter (`e`), known without reading the column. */
  e: string;
  /** 0: the frame is the column's msgpack as is; 1: LZ4 (codec.ts). */
  codec: 0 | 1;
  /** Frame bytes as stored. */
  stored: number;
  /** The column's msgpack length. */
  length: number;
  crc: number;
  /** Where the frame starts, from the first frame. */
  at: number;
}

/** A column frame that failed its checksum or did not decode: the block is damaged. */
export class FrameDamage extends LogsvcError {
  constructor(message: string) {
    super('E_STATE_CORRUPT', message);
  }
}

// ---- the msgpack walk (msgpack spec: headers only) ----------------------------------------------

function corrupt(what: string): never {
  throw new LogsvcError('E_INTERNAL', `block body: ${what}`);
}

/** The header of the msgpack value at `p`: how many bytes before its content, its content length, its child values. */
function header(b: Buffer, p: number): { head: number; len: number; kids: number } {
  if (p >= b.length) corrupt('ends early');
  const x = b[p]!;
  if (x <= 0x7f || x >= 0xe0) return { head: 1, len: 0, kids: 0 };
  if (x <= 0x8f) return { head: 1, len: 0, kids: 2 * (x & 0x0f) };
  if (x <= 0x9f) return { head: 1, len: 0, kids: x & 0x0f };
  if (x <= 0xbf) return { head: 1, len: x & 0x1f, kids: 0 };
  switch (x) {
    case 0xc0:
    case 0xc2:
    case 0xc3:
      return { head: 1, len: 0, kids: 0 };
    case 0xc4:
    case 0xd9:
      return { head: 2, len: b[p + 1]!, kids: 0 };
    case 0xc5:
    case 0xda:
      return { head: 3, len: b.readUInt16BE(p + 1), kids: 0 };
    case 0xc6:
    case 0xdb:
      return { head: 5, len: b.readUInt32BE(p + 1), kids: 0 };
    case 0xc7:
      return { head: 3, len: b[p + 1]!, kids: 0 };
    case 0xc8:
      return { head: 4, len: b.readUInt16BE(p + 1), kids: 0 };
    case 0xc9:
      return { head: 6, len: b.readUInt32BE(p + 1), kids: 0 };
    case 0xca:
      return { head: 1, len: 4, kids: 0 };
    case 0xcb:
      return { head: 1, len: 8, kids: 0 };
    case 0xcc:
    case 0xd0:
      return { head: 1, len: 1, kids: 0 };
    case 0xcd:
    case 0xd1:
      return { head: 1, len: 2, kids: 0 };
    case 0xce:
    case 0xd2:
      return { head: 1, len: 4, kids: 0 };
    case 0xcf:
    case 0xd3:
      return { head: 1, len: 8, kids: 0 };
    case 0xd4:
      return { head: 2, len: 1, kids: 0 };
    case 0xd5:
      return { head: 2, len: 2, kids: 0 };
    case 0xd6:
      return { head: 2, len: 4, kids: 0 };
    case 0xd7:
      return { head: 2, len: 8, kids: 0 };
    case 0xd8:
      return { head: 2, len: 16, kids: 0 };
    case 0xdc:
      return { head: 3, len: 0, kids: b.readUInt16BE(p + 1) };
    case 0xdd:
      return { head: 5, len: 0, kids: b.readUInt32BE(p + 1) };
    case 0xde:
      return { head: 3, len: 0, kids: 2 * b.readUInt16BE(p + 1) };
    case 0xdf:
      return { head: 5, len: 0, kids: 2 * b.readUInt32BE(p + 1) };
    default:
      return corrupt(`byte 0x${x.toString(16)} at ${p}`);
  }
}

/** The position just past the value at `p` (iterative: no recursion on nesting). */
function skip(b: Buffer, p: number): number {
  let left = 1;
  while (left > 0) {
    const h = header(b, p);
    p += h.head + h.len;
    left += h.kids - 1;
  }
  if (p > b.length) corrupt('ends early');
  return p;
}

function str(b: Buffer, p: number): { s: string; next: number } {
  const x = b[p]!;
  if (!((x >= 0xa0 && x <= 0xbf) || x === 0xd9 || x === 0xda || x === 0xdb)) corrupt(`expected a string at ${p}`);
  const h = header(b, p);
  const from = p + h.head;
  return { s: b.toString('utf8', from, from + h.len), next: from + h.len };
}

function container(b: Buffer, p: number, map: boolean): { kids: number; next: number } {
  const x = b[p]!;
  const isMap = (x >= 0x80 && x <= 0x8f) || x === 0xde || x === 0xdf;
  const isArray = (x >= 0x90 && x <= 0x9f) || x === 0xdc || x === 0xdd;
  if (map ? !isMap : !isArray) corrupt(`expected ${map ? 'a map' : 'an array'} at ${p}`);
  const h = header(b, p);
  return { kids: h.kids, next: p + h.head };
}

/** The `e` of a column map at `p` ('' when it has none). */
function encodingAt(b: Buffer, p: number): string {
  if (!((b[p]! >= 0x80 && b[p]! <= 0x8f) || b[p] === 0xde || b[p] === 0xdf)) return '';
  const m = container(b, p, true);
  let q = m.next;
  for (let k = 0; k < m.kids / 2; k++) {
    const key = str(b, q);
    if (key.s === 'e') return str(b, key.next).s;
    q = skip(b, key.next);
  }
  return '';
}

/** A column's byte range in a body map. */
export interface BodyPart {
  field: boolean;
  name: string;
  e: string;
  start: number;
  end: number;
}

/** Cuts a body map into its columns: the built-ins in BUILTIN_COLUMNS order, then the fields in body order. */
export function splitBody(body: Buffer): BodyPart[] {
  const top = container(body, 0, true);
  const builtins = new Map<string, BodyPart>();
  const fields: BodyPart[] = [];
  let p = top.next;
  for (let k = 0; k < top.kids / 2; k++) {
    const key = str(body, p);
    p = key.next;
    if (key.s === 'fields') {
      const arr = container(body, p, false);
      p = arr.next;
      for (let j = 0; j < arr.kids; j++) {
        const pair = container(body, p, false);
        if (pair.kids !== 2) corrupt('a field entry is not a [name, column] pair');
        const name = str(body, pair.next);
        const end = skip(body, name.next);
        fields.push({ field: true, name: name.s, e: encodingAt(body, name.next), start: name.next, end });
        p = end;
      }
      continue;
    }
    const end = skip(body, p);
    if ((BUILTIN_COLUMNS as readonly string[]).includes(key.s)) builtins.set(key.s, { field: false, name: key.s, e: encodingAt(body, p), start: p, end });
    else if (key.s !== 'n') corrupt(`unknown column ${JSON.stringify(key.s)}`);
    p = end;
  }
  const out: BodyPart[] = [];
  for (const name of BUILTIN_COLUMNS) {
    const part = builtins.get(name);
    if (part === undefined) corrupt(`no ${name} column`);
    out.push(part);
  }
  return [...out, ...fields];
}

// ---- the directory -----------------------------------------------------------------------------

/** Fixed bytes of a directory entry before its name. */
const ENTRY_BYTES = 18;

/**
 * The column frames of a body and their directory. Directory: u32 column count, then per column
 * u8 kind (0 built-in, 1 field), u8 encoding letter, u8 codec, u8 0, u32 stored length, u32
 * msgpack length, u32 CRC-32C of the stored frame, u16 name length, the name in UTF-8.
 */
export function frameBody(body: Buffer, codec: BlockCodec): { directory: Buffer; frames: Buffer[]; stored: number; plain: number } {
  const parts = splitBody(body);
  const names = parts.map((p) => Buffer.from(p.name, 'utf8'));
  let size = 4;
  for (const n of names) {
    if (n.length > 0xffff) throw new LogsvcError('E_INTERNAL', 'a field name longer than 65535 bytes');
    size += ENTRY_BYTES + n.length;
  }
  const dir = Buffer.allocUnsafe(size);
  dir.writeUInt32LE(parts.length, 0);
  const frames: Buffer[] = [];
  let stored = 0;
  let plain = 0;
  let q = 4;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    const bytes = body.subarray(part.start, part.end);
    // Tiny columns (a run-length column, a one-entry dictionary) are kept as they are.
    const packed = bytes.length < 64 ? null : codec.compress(bytes);
    const lz4 = packed !== null && packed.length < bytes.length;
    const frame = lz4 ? packed : bytes;
    frames.push(frame);
    stored += frame.length;
    plain += bytes.length;
    dir[q] = part.field ? 1 : 0;
    dir[q + 1] = part.e.length === 1 ? part.e.charCodeAt(0) & 0x7f : 0;
    dir[q + 2] = lz4 ? 1 : 0;
    dir[q + 3] = 0;
    dir.writeUInt32LE(frame.length, q + 4);
    dir.writeUInt32LE(bytes.length, q + 8);
    dir.writeUInt32LE(crc32c(frame), q + 12);
    dir.writeUInt16LE(names[k]!.length, q + 16);
    names[k]!.copy(dir, q + ENTRY_BYTES);
    q += ENTRY_BYTES + names[k]!.length;
  }
  return { directory: dir, frames, stored, plain };
}

/** Parses a directory; null when it does not add up (then the block is damaged). */
export function parseDirectory(dir: Buffer, framesLength: number): ColumnEntry[] | null {
  if (dir.length < 4) return null;
  const count = dir.readUInt32LE(0);
  if (count < BUILTIN_COLUMNS.length || count > dir.length) return null;
  const out: ColumnEntry[] = [];
  let q = 4;
  let at = 0;
  for (let k = 0; k < count; k++) {
    if (q + ENTRY_BYTES > dir.length) return null;
    const len = dir.readUInt16LE(q + 16);
    if (q + ENTRY_BYTES + len > dir.length) return null;
    const field = dir[q] === 1;
    const codec = dir[q + 2];
    if (codec !== 0 && codec !== 1) return null;
    const e = dir[q + 1]!;
    const entry: ColumnEntry = {
      field,
      name: dir.toString('utf8', q + ENTRY_BYTES, q + ENTRY_BYTES + len),
      e: e === 0 ? '' : String.fromCharCode(e),
      codec,
      stored: dir.readUInt32LE(q + 4),
      length: dir.readUInt32LE(q + 8),
      crc: dir.readUInt32LE(q + 12),
      at,
    };
    if (k < BUILTIN_COLUMNS.length ? field || entry.name !== BUILTIN_COLUMNS[k] : !field) return null;
    at += entry.stored;
    q += ENTRY_BYTES + len;
    out.push(entry);
  }
  if (q !== dir.length || at !== framesLength) return null;
  return out;
}

// ---- reading ------------------------------------------------------------------------------------

/** A block's encoded columns, whatever its format; decoded (msgpack) on first use. */
export interface EncodedBlock {
  readonly n: number;
  /** Field names in body order (templates refer to fields by this position). */
  readonly names: readonly string[];
  /** A built-in column's or field j's encoding letter, without reading it. */
  encoding(col: BuiltinColumn | number): string;
  builtin<K extends BuiltinColumn>(key: K): BlockBody[K];
  field(j: number): StringColumn;
}

/** Formats 1 to 4: the one decoded body map. */
export function bodyColumns(d: BlockBody): EncodedBlock {
  if (d === null || typeof d !== 'object' || typeof d.n !== 'number' || !Array.isArray(d.fields)) throw new LogsvcError('E_STATE_CORRUPT', 'block body is not a column map');
  const names = d.fields.map(([name]) => name);
  return {
    n: d.n,
    names,
    encoding: (col) => (typeof col === 'number' ? d.fields[col]?.[1]?.e : (d[col] as { e?: string } | undefined)?.e) ?? '',
    builtin: (key) => d[key],
    field: (j) => {
      const f = d.fields[j];
      if (f === undefined) throw new LogsvcError('E_STATE_CORRUPT', `block body has no field column ${j}`);
      return f[1];
    },
  };
}

/**
 * Format 5: frames loaded on first use. `read(at, length)` gives the stored bytes of a frame
 * (`at` from the first frame): a slice of a block already in memory, or a read of the file.
 * Each frame is checked against its CRC before it is decompressed; a mismatch throws FrameDamage.
 */
export function framedColumns(n: number, dir: readonly ColumnEntry[], read: (at: number, length: number) => Buffer, codec: BlockCodec, where: string): EncodedBlock {
  const fields = dir.slice(BUILTIN_COLUMNS.length);
  const names = fields.map((f) => f.name);
  const cache = new Array<unknown>(dir.length);
  const load = (k: number): unknown => {
    if (cache[k] !== undefined) return cache[k];
    const entry = dir[k]!;
    const stored = read(entry.at, entry.stored);
    if (stored.length !== entry.stored || crc32c(stored) !== entry.crc) throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} fails its checksum`);
    let plain: Buffer;
    try {
      plain = entry.codec === 1 ? codec.decompress(stored) : stored;
    } catch (err) {
      throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} does not decompress (${(err as Error).message})`);
    }
    if (plain.length !== entry.length) throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} decompressed to ${plain.length} bytes, expected ${entry.length}`);
    const value = unpack(plain);
    if (value === null || typeof value !== 'object') throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} is not a column`);
    cache[k] = value;
    return value;
  };
  return {
    n,
    names,
    encoding: (col) => (typeof col === 'number' ? (fields[col]?.e ?? '') : dir[BUILTIN_COLUMNS.indexOf(col)]!.e),
    builtin: <K extends BuiltinColumn>(key: K) => load(BUILTIN_COLUMNS.indexOf(key)) as BlockBody[K],
    field: (j) => {
      if (j < 0 || j >= fields.length) throw new LogsvcError('E_STATE_CORRUPT', `${where}: no field column ${j}`);
      return load(BUILTIN_COLUMNS.length + j) as StringColumn;
    },
  };
}

/** Every column of an encoded block as one body map (the per-event decoders take that). */
export function wholeBody(b: EncodedBlock): BlockBody {
  return {
    n: b.n,
    ts: b.builtin('ts'),
    tz: b.builtin('tz'),
    raw: b.builtin('raw'),
    it: b.builtin('it'),
    off: b.builtin('off'),
    idx: b.builtin('idx'),
    fields: b.names.map((name, j) => [name, b.field(j)]),
  };
}
