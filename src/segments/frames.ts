/**
 * Format 5 block bodies: each column in its own frame (msgpack of the column, LZ4-compressed
 * unless that does not make it smaller; columns under 4 KiB share frames with their neighbours)
 * with its own CRC-32C, listed in a directory after the block header, so a query reads, checks
 * and decompresses only the frames of the columns it asks for (issue 19).
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
import type { NumberColumn, StringColumn } from './columns.js';
import type { RawColumn } from './raw-columns.js';
import { encodeSummaries, parseSummaries, summarizeColumn, type ColumnSummary, type SummaryPart } from './summaries.js';
import { utf8Interned } from './intern.js';

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

/** One frame of a format 5 block: one large column, or several small ones back to back. */
export interface FrameEntry {
  /** 0: stored as is; 1: LZ4 (codec.ts). */
  codec: 0 | 1;
  /** Bytes as stored. */
  stored: number;
  /** Bytes once decompressed: the msgpack of its columns, back to back. */
  plain: number;
  crc: number;
  /** Where the frame starts, from the first frame. */
  at: number;
}

/** One column of a format 5 block as its directory lists it. */
export interface ColumnEntry {
  /** A field column (else a built-in: BUILTIN_COLUMNS). */
  field: boolean;
  name: string;
  /** The column's encoding letter (`e`), known without reading the column. */
  e: string;
  /** The frame that holds it, and where its msgpack lies in that frame once decompressed. */
  frame: number;
  offset: number;
  length: number;
  /** Format 6: what the head says about the column (summaries.ts). */
  summary?: ColumnSummary;
}

export interface Directory {
  frames: FrameEntry[];
  columns: ColumnEntry[];
}

/** A head's field columns by name, made once per column list: a cached head serves block after block. */
export interface FieldIndex<C> {
  /** The field columns in body order, and their names. */
  fields: C[];
  names: string[];
  /** A name's column number in the list: its last occurrence, as readers take it. */
  last: Map<string, number>;
}

const fieldIndexes = new WeakMap<readonly unknown[], FieldIndex<unknown>>();

/**
 * The field columns of a column list (built-ins first, as a directory holds them; any column with
 * `field` set counts) by name. Made per block view before, a JSON block's 70 names were copied into
 * new arrays and searched name by name for every column a query asked of every block.
 */
export function fieldIndex<C extends { field: boolean; name: string }>(columns: readonly C[]): FieldIndex<C> {
  const got = fieldIndexes.get(columns);
  if (got !== undefined) return got as FieldIndex<C>;
  const fields: C[] = [];
  const last = new Map<string, number>();
  columns.forEach((c, k) => {
    if (!c.field) return;
    fields.push(c);
    last.set(c.name, k);
  });
  const made = { fields, names: fields.map((c) => c.name), last };
  fieldIndexes.set(columns, made);
  return made;
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

/** The msgpack walk, for readers of one column's bytes (EncodedBlock.bytes). */
export { header as msgpackHeader, skip as msgpackSkip };

/** The child values of the value `span` read last. */
let spanKids = 0;

/**
 * The bytes of the value at `p` before its children (header and content), its child count in
 * `spanKids`: `header` without an object per call, for walks over whole columns (a dictionary's
 * entries, a template's layouts).
 */
function span(b: Buffer, p: number): number {
  const x = b[p];
  if (x === undefined) corrupt('ends early');
  spanKids = 0;
  if (x <= 0x7f || x >= 0xe0) return 1;
  if (x <= 0x8f) {
    spanKids = 2 * (x & 0x0f);
    return 1;
  }
  if (x <= 0x9f) {
    spanKids = x & 0x0f;
    return 1;
  }
  if (x <= 0xbf) return 1 + (x & 0x1f);
  if (x === 0xd9 || x === 0xc4) return 2 + b[p + 1]!;
  if (x === 0xcc || x === 0xd0) return 2;
  if (x === 0xcd || x === 0xd1) return 3;
  if (x === 0xce || x === 0xd2 || x === 0xca) return 5;
  if (x === 0xcf || x === 0xd3 || x === 0xcb) return 9;
  const h = header(b, p);
  spanKids = h.kids;
  return h.head + h.len;
}

/** The position just past the value at `p` (iterative: no recursion on nesting). */
function skip(b: Buffer, p: number): number {
  let left = 1;
  while (left > 0) {
    p += span(b, p);
    left += spanKids - 1;
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

/**
 * Columns smaller than this share frames: LZ4 compresses a few KiB poorly on its own (the JSON
 * set's segments grew 3.5 % with one frame per column, 0.5 % with small columns grouped).
 */
const SMALL_COLUMN = 4096;
/** A frame of small columns is closed once it holds this much. */
const GROUP_BYTES = 32 * 1024;
/** Frames smaller than this are stored as they are. */
const MIN_COMPRESS = 64;
const FRAME_BYTES = 13;
const COLUMN_BYTES = 14;

/**
 * The frames of a body and their directory. Directory: u32 frame count, per frame u8 codec (0
 * as is, 1 LZ4), u32 stored length, u32 decompressed length, u32 CRC-32C of the stored bytes;
 * then u32 column count, per column u8 kind (0 built-in, 1 field), u8 encoding letter, u16
 * frame, u32 offset and u32 length of its msgpack in the decompressed frame, u16 name length,
 * the name in UTF-8. A column of SMALL_COLUMN bytes or more has a frame of its own; smaller
 * ones share frames with their neighbours in body order. Format 6 (`n`, the event count, given):
 * then the column summaries (summaries.ts).
 */
export function frameBody(body: Buffer, codec: BlockCodec, n?: number): { directory: Buffer; frames: Buffer[]; stored: number; plain: number } {
  const parts = splitBody(body);
  // Format 6 (`n` given): summaries of some columns (summaries.ts), a summarised dictionary's
  // column in its frame without its entries (they are in the summary).
  const summaries: SummaryPart[] = [];
  const bytesOf: (Buffer | undefined)[] = [];
  if (n !== undefined) {
    parts.forEach((p, k) => {
      const s = summarizeColumn(k, p, body.subarray(p.start, p.end), n);
      if (s === null) return;
      summaries.push(s);
      if (s.columnBytes !== undefined) bytesOf[k] = s.columnBytes;
    });
  }
  const partBytes = (k: number): Buffer => bytesOf[k] ?? body.subarray(parts[k]!.start, parts[k]!.end);
  const names = parts.map((p) => Buffer.from(p.name, 'utf8'));
  // Frames as runs of parts: [first, end) each.
  const runs: [number, number][] = [];
  let open = -1;
  let openBytes = 0;
  for (let k = 0; k < parts.length; k++) {
    const len = partBytes(k).length;
    if (len >= SMALL_COLUMN) {
      if (open >= 0) runs.push([open, k]);
      open = -1;
      runs.push([k, k + 1]);
      continue;
    }
    if (open < 0) {
      open = k;
      openBytes = 0;
    }
    openBytes += len;
    if (openBytes >= GROUP_BYTES) {
      runs.push([open, k + 1]);
      open = -1;
    }
  }
  if (open >= 0) runs.push([open, parts.length]);
  if (runs.length > 0xffff) throw new LogsvcError('E_INTERNAL', 'a block with more than 65535 column frames');
  let size = 8 + runs.length * FRAME_BYTES;
  for (const n of names) {
    if (n.length > 0xffff) throw new LogsvcError('E_INTERNAL', 'a field name longer than 65535 bytes');
    size += COLUMN_BYTES + n.length;
  }
  const section = n === undefined ? null : encodeSummaries(summaries);
  const dir = Buffer.allocUnsafe(size + (section?.length ?? 0));
  section?.copy(dir, size);
  dir.writeUInt32LE(runs.length, 0);
  const frames: Buffer[] = [];
  let stored = 0;
  let plain = 0;
  let q = 4;
  let c = 8 + runs.length * FRAME_BYTES;
  dir.writeUInt32LE(parts.length, c - 4);
  for (let f = 0; f < runs.length; f++) {
    const [first, end] = runs[f]!;
    // Parts of a run are adjacent in the body except across the fields array's framing: copy them together.
    const bytes = end - first === 1 ? partBytes(first) : Buffer.concat(Array.from({ length: end - first }, (_, j) => partBytes(first + j)));
    const packed = bytes.length < MIN_COMPRESS ? null : codec.compress(bytes);
    const lz4 = packed !== null && packed.length < bytes.length;
    const frame = lz4 ? packed : bytes;
    frames.push(frame);
    stored += frame.length;
    plain += bytes.length;
    dir[q] = lz4 ? 1 : 0;
    dir.writeUInt32LE(frame.length, q + 1);
    dir.writeUInt32LE(bytes.length, q + 5);
    dir.writeUInt32LE(crc32c(frame), q + 9);
    q += FRAME_BYTES;
    let offset = 0;
    for (let k = first; k < end; k++) {
      const part = parts[k]!;
      const len = partBytes(k).length;
      dir[c] = part.field ? 1 : 0;
      dir[c + 1] = part.e.length === 1 ? part.e.charCodeAt(0) & 0x7f : 0;
      dir.writeUInt16LE(f, c + 2);
      dir.writeUInt32LE(offset, c + 4);
      dir.writeUInt32LE(len, c + 8);
      dir.writeUInt16LE(names[k]!.length, c + 12);
      names[k]!.copy(dir, c + COLUMN_BYTES);
      c += COLUMN_BYTES + names[k]!.length;
      offset += len;
    }
  }
  return { directory: dir, frames, stored, plain };
}

/**
 * Parses a directory; null when it does not add up (then the block is damaged). Format 6 (`n`,
 * the block's event count, given): the column summaries follow the columns.
 */
export function parseDirectory(dir: Buffer, framesLength: number, n?: number): Directory | null {
  if (dir.length < 8) return null;
  const nf = dir.readUInt32LE(0);
  if (nf > 0xffff || 8 + nf * FRAME_BYTES > dir.length) return null;
  const frames: FrameEntry[] = [];
  let q = 4;
  let at = 0;
  for (let f = 0; f < nf; f++) {
    const codec = dir[q];
    if (codec !== 0 && codec !== 1) return null;
    const entry: FrameEntry = { codec, stored: dir.readUInt32LE(q + 1), plain: dir.readUInt32LE(q + 5), crc: dir.readUInt32LE(q + 9), at };
    if (codec === 0 && entry.plain !== entry.stored) return null;
    frames.push(entry);
    at += entry.stored;
    q += FRAME_BYTES;
  }
  if (at !== framesLength) return null;
  const count = dir.readUInt32LE(q);
  q += 4;
  if (count < BUILTIN_COLUMNS.length || count > dir.length) return null;
  const columns: ColumnEntry[] = [];
  for (let k = 0; k < count; k++) {
    if (q + COLUMN_BYTES > dir.length) return null;
    const len = dir.readUInt16LE(q + 12);
    if (q + COLUMN_BYTES + len > dir.length) return null;
    const field = dir[q] === 1;
    const e = dir[q + 1]!;
    const entry: ColumnEntry = {
      field,
      name: utf8Interned(dir, q + COLUMN_BYTES, q + COLUMN_BYTES + len),
      e: e === 0 ? '' : String.fromCharCode(e),
      frame: dir.readUInt16LE(q + 2),
      offset: dir.readUInt32LE(q + 4),
      length: dir.readUInt32LE(q + 8),
    };
    const frame = frames[entry.frame];
    if (frame === undefined || entry.offset + entry.length > frame.plain) return null;
    if (k < BUILTIN_COLUMNS.length ? field || entry.name !== BUILTIN_COLUMNS[k] : !field) return null;
    q += COLUMN_BYTES + len;
    columns.push(entry);
  }
  if (n === undefined) return q === dir.length ? { frames, columns } : null;
  const summaries = parseSummaries(dir, q, columns, n);
  if (summaries === null) return null;
  for (const [k, summary] of summaries) columns[k]!.summary = summary;
  return { frames, columns };
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
  /**
   * A column's msgpack undecoded (formats 5 and 6, its frame read and checked), for readers that
   * walk it themselves; null for formats 1 to 4 and for a format 6 dictionary whose entries are in
   * the head's summary (its frame holds the codes only).
   */
  bytes(col: BuiltinColumn | number): Buffer | null;
  /** A name's field column number (its last occurrence), -1 for none; absent: search `names`. */
  fieldNumber?(name: string): number;
  /** Format 6: field j's dictionary entries when the head's summary holds them (its frame unread); null otherwise. */
  headEntries?(j: number): readonly string[] | null;
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
    bytes: () => null,
  };
}

/** A column's msgpack copied out of a frame too large to keep is at most this long (a dictionary's codes of 8,192 rows). */
const KEPT_COLUMN_MAX = 16 * 1024;

/** Frames of one block kept decompressed between reads (query/kept-frames.ts): asked before a frame is read, given it after. */
export interface FrameKeeper {
  get(frame: number): Buffer | undefined;
  put(frame: number, plain: Buffer): void;
  /** Column k as decoded (msgpack) before and held here; undefined when not held. */
  column?(k: number): unknown;
  /**
   * Holds column k as decoded, a view of a frame held here or of `own` bytes of its own (its
   * msgpack copied out of a frame too large to keep); never changed by a reader.
   */
  keepColumn?(k: number, value: unknown, own: number): void;
  /** A summarised dictionary's codes in a frame too large to keep are copied out and held (reads of single columns). */
  readonly copiesColumns?: boolean;
}

/**
 * Format 5: frames loaded on first use. `read(at, length)` gives the stored bytes of a frame
 * (`at` from the first frame): a slice of a block already in memory, or a read of the file.
 * Each frame is checked against its CRC before it is decompressed; a mismatch throws FrameDamage.
 * `kept`: frames checked and decompressed before (never written to by a reader).
 */
export function framedColumns(n: number, dir: Directory, read: (at: number, length: number) => Buffer, codec: BlockCodec, where: string, kept?: FrameKeeper): EncodedBlock {
  const { fields, names, last } = fieldIndex(dir.columns);
  const plainFrames = new Array<Buffer | undefined>(dir.frames.length);
  const cache = new Array<unknown>(dir.columns.length);
  const frame = (f: number, name: string): Buffer => {
    const got = plainFrames[f] ?? kept?.get(f);
    if (got !== undefined) return (plainFrames[f] = got);
    const entry = dir.frames[f]!;
    const stored = read(entry.at, entry.stored);
    if (stored.length !== entry.stored || crc32c(stored) !== entry.crc) throw new FrameDamage(`${where}: the frame of column ${JSON.stringify(name)} fails its checksum`);
    let plain: Buffer;
    try {
      plain = entry.codec === 1 ? codec.decompress(stored) : stored;
    } catch (err) {
      throw new FrameDamage(`${where}: the frame of column ${JSON.stringify(name)} does not decompress (${(err as Error).message})`);
    }
    if (plain.length !== entry.plain) throw new FrameDamage(`${where}: the frame of column ${JSON.stringify(name)} decompressed to ${plain.length} bytes, expected ${entry.plain}`);
    plainFrames[f] = plain;
    kept?.put(f, plain);
    return plain;
  };
  const load = (k: number): unknown => {
    if (cache[k] !== undefined) return cache[k];
    // Decoded before from a kept frame (kept-frames.ts): no msgpack decode per block and query.
    const held = kept?.column?.(k);
    if (held !== undefined) return (cache[k] = held);
    const entry = dir.columns[k]!;
    const bytes = frame(entry.frame, entry.name);
    const heldFrame = kept?.get(entry.frame) !== undefined;
    // A summarised dictionary's codes (a byte or two a row) out of a group frame too large to keep:
    // copied and held alone, so the next filter or group on the field reads no frame of this block
    // (3 % of a 1 M JSON set's blocks had user.plan's codes in such a frame, and their reads, checks
    // and LZ4 were a tenth of `user.plan=enterprise | groupBy(user.geo.country)`).
    const copy = !heldFrame && kept?.copiesColumns === true && entry.summary?.kind === 'dict' && entry.length <= KEPT_COLUMN_MAX;
    let src = bytes.subarray(entry.offset, entry.offset + entry.length);
    if (copy) {
      const own = Buffer.allocUnsafeSlow(src.length);
      src.copy(own);
      src = own;
    }
    let value: unknown;
    try {
      value = unpack(src);
    } catch (err) {
      throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} does not decode (${(err as Error).message})`);
    }
    if (value === null || typeof value !== 'object') throw new FrameDamage(`${where}: column ${JSON.stringify(entry.name)} is not a column`);
    // Format 6: a summarised dictionary's entries are in the head, its frame holds the codes.
    if (entry.summary?.kind === 'dict' && (value as { d?: unknown }).d === undefined) (value as { d: string[] }).d = entry.summary.d;
    cache[k] = value;
    // Columns that are views of the frame's bytes and nothing more (a summarised dictionary's codes,
    // UTF-8 text and IPv4 runs): held beside the frame for the next block view, at the cost of an object.
    if (copy) kept!.keepColumn?.(k, value, src.length);
    else if (heldFrame && (entry.summary?.kind === 'dict' || entry.e === 'u' || entry.e === '4')) kept!.keepColumn?.(k, value, 0);
    return value;
  };
  return {
    n,
    names,
    fieldNumber: (name) => {
      const k = last.get(name);
      return k === undefined ? -1 : k - BUILTIN_COLUMNS.length;
    },
    encoding: (col) => (typeof col === 'number' ? (fields[col]?.e ?? '') : dir.columns[BUILTIN_COLUMNS.indexOf(col)]!.e),
    builtin: <K extends BuiltinColumn>(key: K) => load(BUILTIN_COLUMNS.indexOf(key)) as BlockBody[K],
    field: (j) => {
      if (j < 0 || j >= fields.length) throw new LogsvcError('E_STATE_CORRUPT', `${where}: no field column ${j}`);
      return load(BUILTIN_COLUMNS.length + j) as StringColumn;
    },
    bytes: (col) => {
      const k = typeof col === 'number' ? BUILTIN_COLUMNS.length + col : BUILTIN_COLUMNS.indexOf(col);
      const entry = dir.columns[k];
      if (entry === undefined || (typeof col === 'number' && col < 0)) throw new LogsvcError('E_STATE_CORRUPT', `${where}: no column ${col}`);
      // Format 6: a summarised dictionary's frame holds its codes only (its entries are in the
      // head), not the column's msgpack: read it decoded (`load` adds the entries).
      if (entry.summary?.kind === 'dict') return null;
      return frame(entry.frame, entry.name).subarray(entry.offset, entry.offset + entry.length);
    },
    headEntries: (j) => {
      const s = fields[j]?.summary;
      return s?.kind === 'dict' ? s.d : null;
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
