/**
 * Blocks: the unit of compression, checksumming and skipping. A block holds up to ~1 MB of events of
 * one datasource from one digest partition, stored by column (timestamps, zones, raw strings, queue
 * positions, and one column per field name), msgpack-encoded and LZ4-compressed. Byte layout in
 * docs/formats/segment.md.
 */
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import { crc32c } from '../storage/index.js';
import { BloomBuilder } from './bloom.js';
import type { BlockCodec } from './codec.js';
import { GramFilterBuilder } from './grams.js';
import { decodeNumbers, decodeStrings, encodeNumbers, encodeStrings, type StringColumn } from './columns.js';
import { decodeRaw, encodeRaw, encodeTemplate, templatePieces } from './raw-columns.js';
import { bodyColumns, frameBody, FrameDamage, framedColumns, parseDirectory, wholeBody, type BlockBody, type EncodedBlock } from './frames.js';
import { lz4Codec } from './codec.js';

export type { BlockBody } from './frames.js';

/**
 * Blocks of segment format 5: a column directory after the fixed header, each column its own
 * frame (frames.ts). Header: the 64 bytes of format 2 to 4, then u32 directory length, u32 CRC-32C
 * of the bloom and gram filters, u32 CRC-32C over bytes 0..71 and the directory.
 */
export const BLOCK_MAGIC_V5 = Buffer.from('LBK5');
export const BLOCK_FIXED_BYTES_V5 = 76;
/**
 * Blocks of segment format 6: as format 5, but the directory is followed by column summaries
 * (summaries.ts) and the two are one "head section", LZ4-compressed when that makes it smaller.
 * Header: bytes 0..75 as format 5 (D at 64 now the head section's stored length, the CRC at 72
 * over bytes 0..71 and 76 to the end of the head section), then u32 the head section's length
 * once decompressed, u8 its codec (0 as is, 1 LZ4), three zero bytes.
 */
export const BLOCK_MAGIC_V6 = Buffer.from('LBK6');
export const BLOCK_FIXED_BYTES_V6 = 84;
/** Head sections smaller than this are stored as they are. */
const MIN_HEAD_COMPRESS = 64;
/** Blocks of segment formats 2 to 4: the header also gives the gram filter's length. */
export const BLOCK_MAGIC = Buffer.from('LBK2');
export const BLOCK_HEADER_BYTES = 68;
/** In the header's gram filter length (offset 60): the filter holds field values' grams too (format 4). */
export const FIELD_GRAMS_BIT = 0x80000000;
/** Blocks of segment format 1 (still read): no gram filter. */
export const BLOCK_MAGIC_V1 = Buffer.from('LBLK');
export const BLOCK_HEADER_BYTES_V1 = 64;

/** One stored event with its queue position. */
export interface StoredEvent {
  timestamp: number;
  timezone: string;
  rawstring: string;
  fields: Record<string, string>;
  ingestTimestamp: number;
  offset: number;
  index: number;
}

/** Events of a block in column form, as built by the digest (cheap to append to). */
export interface BlockColumns {
  count: number;
  ts: number[];
  tz: string[];
  raw: string[];
  it: number[];
  off: number[];
  idx: number[];
  /** field name -> values by event position (undefined where absent). A Map: field names are data. */
  fields: Map<string, (string | undefined)[]>;
}

export function emptyColumns(): BlockColumns {
  return { count: 0, ts: [], tz: [], raw: [], it: [], off: [], idx: [], fields: new Map() };
}

export function addEvent(c: BlockColumns, e: StoredEvent): void {
  appendEvent(c, e.timestamp, e.timezone, e.rawstring, e.fields, e.ingestTimestamp, e.offset, e.index);
}

/** The digest's hot path: no intermediate event object per event. */
export function appendEvent(
  c: BlockColumns,
  timestamp: number,
  timezone: string,
  rawstring: string,
  fields: Record<string, string>,
  ingestTimestamp: number,
  offset: number,
  index: number,
): void {
  const i = c.count++;
  c.ts.push(timestamp);
  c.tz.push(timezone);
  c.raw.push(rawstring);
  c.it.push(ingestTimestamp);
  c.off.push(offset);
  c.idx.push(index);
  for (const name in fields) {
    let col = c.fields.get(name);
    if (col === undefined) c.fields.set(name, (col = []));
    // Keep columns dense (no holes): holey arrays are slower to fill and to clone.
    while (col.length < i) col.push(undefined);
    col.push(fields[name]);
  }
}

/**
 * Appends events `from..n-1` of a group given by column (the digest's hot path: whole columns, no
 * per-event field objects). `fieldNames`/`fieldValues` are parallel; a null value is an absent field.
 */
export function appendColumns(
  c: BlockColumns,
  g: { n: number; ts: readonly number[]; tz: readonly string[]; raw: readonly string[]; names: readonly string[]; cols: readonly (readonly (string | null)[])[] },
  from: number,
  ingestTimestamp: number,
  offset: number,
  base: number,
): void {
  const start = c.count;
  for (let i = from; i < g.n; i++) {
    c.ts.push(g.ts[i]!);
    c.tz.push(g.tz[i]!);
    c.raw.push(g.raw[i]!);
    c.it.push(ingestTimestamp);
    c.off.push(offset);
    c.idx.push(base + i);
  }
  for (let j = 0; j < g.names.length; j++) {
    const name = g.names[j]!;
    const src = g.cols[j]!;
    // A field only skipped events have makes no column (as event by event).
    let first = from;
    while (first < g.n && src[first] === null) first++;
    if (first >= g.n) continue;
    let col = c.fields.get(name);
    if (col === undefined) c.fields.set(name, (col = []));
    // Dense columns (no holes), as appendEvent keeps them.
    while (col.length < start) col.push(undefined);
    for (let i = from; i < g.n; i++) {
      const v = src[i];
      col.push(v === null ? undefined : v);
    }
  }
  c.count += Math.max(0, g.n - from);
}

export interface BlockMeta {
  compressedLength: number;
  uncompressedLength: number;
  eventCount: number;
  minTs: number;
  maxTs: number;
  firstOffset: number;
  firstIndex: number;
  lastOffset: number;
  lastIndex: number;
  bloomLength: number;
  /** 0 in format 1 blocks. */
  gramLength: number;
  /**
   * The gram filter holds every field value's grams besides @rawstring's (blocks built by format 4
   * builders: bit 31 of the header's gram length). Absent or false: @rawstring's only. A block is
   * flagged, not its segment, because a rewrite (redaction) copies old blocks into a new segment.
   */
  fieldGrams?: boolean;
  /** 68, or 64 in format 1; format 5: 76 + the column directory's length; format 6: 84 + the head section's. */
  headerLength: number;
  /** Format 5: the CRC of the header and directory; before: of the whole block. */
  crc: number;
  /** Format 5: the body is column frames listed in the directory (frames.ts). Absent: one LZ4 body. */
  framed?: boolean;
}

/**
 * What a block is before compression and its header: the msgpack body, both filters, and what the
 * header says about the events. Built here from columns, or by the native builder (src/digest/native-block.ts)
 * straight from record sections.
 */
export interface BlockContent extends Pick<BlockMeta, 'minTs' | 'maxTs' | 'firstOffset' | 'firstIndex' | 'lastOffset' | 'lastIndex'> {
  body: Buffer;
  bloom: Buffer;
  grams: Buffer;
  count: number;
}

/** Encodes columns into a complete block: header, bloom filter, gram filter, compressed body. */
export function encodeBlock(c: BlockColumns, codec: BlockCodec): Buffer {
  return assembleBlock(encodeBlockContent(c), codec);
}

/** The body and filters of a block of these columns. */
export function encodeBlockContent(c: BlockColumns): BlockContent {
  if (c.count === 0) throw new LogsvcError('E_INTERNAL', 'cannot encode an empty block');
  const bloom = new BloomBuilder();
  const grams = new GramFilterBuilder();
  const names = [...c.fields.keys()];
  const values = [...c.fields.values()];
  // Raw strings as templates over the field values where those cover enough of them; then no
  // field column may refer back into the raw strings.
  const pieces = templatePieces(c.count);
  const template = encodeTemplate(c.raw, values, c.count, pieces);
  let minTs = Infinity;
  let maxTs = -Infinity;
  for (let i = 0; i < c.count; i++) {
    const ts = c.ts[i]!;
    if (ts < minTs) minTs = ts;
    if (ts > maxTs) maxTs = ts;
    // A clean templated raw string's tokens and grams are its pieces' (gaps below, values in the
    // column loop): scanning each distinct piece once was ~40 % of the block build's text passes.
    if (template !== null && pieces.clean[i] === 1) continue;
    bloom.addText(c.raw[i]!);
    grams.addText(c.raw[i]!);
  }
  if (template !== null) {
    for (const g of pieces.gaps) {
      bloom.addText(g);
      grams.addText(g);
    }
  }
  // [name, column] pairs, not a map: field names are data ("__proto__" included).
  const fields: [string, StringColumn][] = names.map((name, j) => [name, encodeStrings(values[j]!, c.count, template === null ? c.raw : undefined)]);
  // Each distinct value once: most columns repeat their values (methods, status codes, agents),
  // and hashing a value costs far more than a Set lookup. A dictionary column already lists them.
  // Format 4: the gram filter holds every field value's grams too (free text searches the stored
  // fields), so a free-text word rules a block out by its grams.
  for (let j = 0; j < values.length; j++) {
    const encoded = fields[j]![1];
    if (encoded.e === 'k') {
      for (const v of encoded.d) {
        bloom.addValue(v);
        grams.addText(v);
      }
      continue;
    }
    const col = values[j]!;
    const seen = new Set<string>();
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (v === undefined || seen.has(v)) continue;
      seen.add(v);
      bloom.addValue(v);
      grams.addText(v);
    }
  }
  const body = pack({
    n: c.count,
    ts: encodeNumbers(c.ts),
    tz: encodeStrings(c.tz, c.count),
    raw: template ?? encodeRaw(c.raw),
    it: encodeNumbers(c.it),
    off: encodeNumbers(c.off),
    idx: encodeNumbers(c.idx),
    fields,
  });
  return {
    body,
    bloom: bloom.build(),
    grams: grams.build(),
    count: c.count,
    minTs,
    maxTs,
    firstOffset: c.off[0]!,
    firstIndex: c.idx[0]!,
    lastOffset: c.off[c.count - 1]!,
    lastIndex: c.idx[c.count - 1]!,
  };
}

/**
 * A format 6 block: the header, the head section (column directory and column summaries, LZ4
 * when that is smaller), the filters and each column as its own frame (frames.ts), each with its
 * checksum.
 */
export function assembleBlock(b: BlockContent, codec: BlockCodec): Buffer {
  const { directory, frames, stored, plain } = frameBody(b.body, codec, b.count);
  const packed = directory.length < MIN_HEAD_COMPRESS ? null : codec.compress(directory);
  const lz4 = packed !== null && packed.length < directory.length;
  const section = lz4 ? packed : directory;
  const header = framedHeader(b, BLOCK_MAGIC_V6, BLOCK_FIXED_BYTES_V6, stored, plain, section.length);
  header.writeUInt32LE(directory.length, 76);
  header[80] = lz4 ? 1 : 0;
  header.writeUInt32LE(crc32c(section, crc32c(header.subarray(76), crc32c(header.subarray(0, 72)))), 72);
  return Buffer.concat([header, section, b.bloom, b.grams, ...frames]);
}

/**
 * A format 5 block (column frames, a plain directory, no summaries): what builds before format 6
 * wrote. Only tests and fixtures write it now (mixed-format segments must keep reading).
 */
export function assembleBlockV5(b: BlockContent, codec: BlockCodec): Buffer {
  const { directory, frames, stored, plain } = frameBody(b.body, codec);
  const header = framedHeader(b, BLOCK_MAGIC_V5, BLOCK_FIXED_BYTES_V5, stored, plain, directory.length);
  header.writeUInt32LE(crc32c(directory, crc32c(header.subarray(0, 72))), 72);
  return Buffer.concat([header, directory, b.bloom, b.grams, ...frames]);
}

/** Bytes 0..71 of a format 5 or 6 header (the CRC at 72 and format 6's fields after it are the caller's). */
function framedHeader(b: BlockContent, magic: Buffer, size: number, stored: number, plain: number, headLength: number): Buffer {
  const header = Buffer.alloc(size);
  magic.copy(header, 0);
  header.writeUInt32LE(stored, 4);
  header.writeUInt32LE(plain, 8);
  writeEventFields(header, b);
  header.writeUInt32LE(b.bloom.length, 56);
  header.writeUInt32LE((b.grams.length | FIELD_GRAMS_BIT) >>> 0, 60);
  header.writeUInt32LE(headLength, 64);
  header.writeUInt32LE(crc32c(b.grams, crc32c(b.bloom)), 68);
  return header;
}

function writeEventFields(header: Buffer, b: BlockContent): void {
  header.writeUInt32LE(b.count, 12);
  header.writeDoubleLE(b.minTs, 16);
  header.writeDoubleLE(b.maxTs, 24);
  header.writeDoubleLE(b.firstOffset, 32);
  header.writeUInt32LE(b.firstIndex, 40);
  header.writeDoubleLE(b.lastOffset, 44);
  header.writeUInt32LE(b.lastIndex, 52);
}

/**
 * A format 4 block (one LZ4 body): what builds before format 5 wrote. Only tests and fixtures
 * write it now (mixed-format segments must keep reading).
 */
export function assembleBlockV4(b: BlockContent, codec: BlockCodec): Buffer {
  const compressed = codec.compress(b.body);
  const bloomBytes = b.bloom;
  const gramBytes = b.grams;
  const header = Buffer.alloc(BLOCK_HEADER_BYTES);
  BLOCK_MAGIC.copy(header, 0);
  header.writeUInt32LE(compressed.length, 4);
  header.writeUInt32LE(b.body.length, 8);
  writeEventFields(header, b);
  header.writeUInt32LE(bloomBytes.length, 56);
  // Bit 31: the gram filter holds field values' grams (format 4 content, both builders).
  header.writeUInt32LE((gramBytes.length | FIELD_GRAMS_BIT) >>> 0, 60);
  let crc = crc32c(header.subarray(0, BLOCK_HEADER_BYTES - 4));
  crc = crc32c(bloomBytes, crc);
  crc = crc32c(gramBytes, crc);
  crc = crc32c(compressed, crc);
  header.writeUInt32LE(crc, BLOCK_HEADER_BYTES - 4);
  return Buffer.concat([header, bloomBytes, gramBytes, compressed]);
}

/** The block magic of a segment format version. */
export function blockMagicOf(version: number): Buffer {
  return version === 1 ? BLOCK_MAGIC_V1 : version >= 6 ? BLOCK_MAGIC_V6 : version === 5 ? BLOCK_MAGIC_V5 : BLOCK_MAGIC;
}

/**
 * Reads a block header (format 5, formats 2 to 4, or format 1, by its magic) at `pos`; null if
 * there is no complete fixed header there (format 5: the directory may still be missing).
 */
export function readBlockMeta(buf: Buffer, pos: number): BlockMeta | null {
  if (buf.length - pos < BLOCK_HEADER_BYTES_V1) return null;
  const magic = buf.subarray(pos, pos + 4);
  const v6 = magic.equals(BLOCK_MAGIC_V6);
  if (v6 || magic.equals(BLOCK_MAGIC_V5)) {
    const fixed = v6 ? BLOCK_FIXED_BYTES_V6 : BLOCK_FIXED_BYTES_V5;
    if (buf.length - pos < fixed) return null;
    return { ...eventFields(buf, pos), gramLength: buf.readUInt32LE(pos + 60) & ~FIELD_GRAMS_BIT, fieldGrams: (buf.readUInt32LE(pos + 60) & FIELD_GRAMS_BIT) !== 0, headerLength: fixed + buf.readUInt32LE(pos + 64), crc: buf.readUInt32LE(pos + 72), framed: true };
  }
  const v1 = magic.equals(BLOCK_MAGIC_V1);
  if (!v1 && (!magic.equals(BLOCK_MAGIC) || buf.length - pos < BLOCK_HEADER_BYTES)) return null;
  const headerLength = v1 ? BLOCK_HEADER_BYTES_V1 : BLOCK_HEADER_BYTES;
  return {
    ...eventFields(buf, pos),
    gramLength: v1 ? 0 : buf.readUInt32LE(pos + 60) & ~FIELD_GRAMS_BIT,
    fieldGrams: !v1 && (buf.readUInt32LE(pos + 60) & FIELD_GRAMS_BIT) !== 0,
    headerLength,
    crc: buf.readUInt32LE(pos + headerLength - 4),
  };
}

function eventFields(buf: Buffer, pos: number): Omit<BlockMeta, 'gramLength' | 'fieldGrams' | 'headerLength' | 'crc' | 'framed'> {
  return {
    compressedLength: buf.readUInt32LE(pos + 4),
    uncompressedLength: buf.readUInt32LE(pos + 8),
    eventCount: buf.readUInt32LE(pos + 12),
    minTs: buf.readDoubleLE(pos + 16),
    maxTs: buf.readDoubleLE(pos + 24),
    firstOffset: buf.readDoubleLE(pos + 32),
    firstIndex: buf.readUInt32LE(pos + 40),
    lastOffset: buf.readDoubleLE(pos + 44),
    lastIndex: buf.readUInt32LE(pos + 52),
    bloomLength: buf.readUInt32LE(pos + 56),
  };
}

/** Where the parts of a block start, relative to its header. */
export type BlockLayout = Pick<BlockMeta, 'headerLength' | 'bloomLength' | 'gramLength' | 'compressedLength'>;

export function blockLength(m: BlockLayout): number {
  return m.headerLength + m.bloomLength + m.gramLength + m.compressedLength;
}

/** Offset of the compressed body from the block's start. */
export function bodyOffset(m: BlockLayout): number {
  return m.headerLength + m.bloomLength + m.gramLength;
}

/** True if the block at `pos` is complete and its checksum matches (format 5: every checksum). */
export function blockIntact(buf: Buffer, pos: number, m: BlockMeta): boolean {
  const end = pos + blockLength(m);
  if (end > buf.length) return false;
  if (m.framed === true) {
    if (!framedHeaderIntact(buf.subarray(pos, pos + m.headerLength), m)) return false;
    const dir = blockDirectory(buf.subarray(pos, pos + m.headerLength), m);
    if (dir === null || crc32c(buf.subarray(pos + m.headerLength, pos + bodyOffset(m))) !== buf.readUInt32LE(pos + 68)) return false;
    const frames = pos + bodyOffset(m);
    return dir.frames.every((f) => crc32c(buf.subarray(frames + f.at, frames + f.at + f.stored)) === f.crc);
  }
  let crc = crc32c(buf.subarray(pos, pos + m.headerLength - 4));
  crc = crc32c(buf.subarray(pos + m.headerLength, end), crc);
  return crc === m.crc;
}

export function blockBloom(buf: Buffer, pos: number, m: BlockMeta): Buffer {
  return buf.subarray(pos + m.headerLength, pos + m.headerLength + m.bloomLength);
}

export function blockGrams(buf: Buffer, pos: number, m: BlockMeta): Buffer {
  const at = pos + m.headerLength + m.bloomLength;
  return buf.subarray(at, at + m.gramLength);
}

/**
 * Formats 5 and 6: true if the header and column directory (`head`: the block's first
 * headerLength bytes; format 6: the head section as stored) match their checksum. Read alone
 * before any column of the block.
 */
export function framedHeaderIntact(head: Buffer, m: BlockMeta): boolean {
  const fixed = head.length >= 4 && head[3] === 0x36 /* LBK6 */ ? BLOCK_FIXED_BYTES_V6 : BLOCK_FIXED_BYTES_V5;
  return head.length === m.headerLength && m.headerLength >= fixed && crc32c(head.subarray(76), crc32c(head.subarray(0, 72))) === head.readUInt32LE(72);
}

/** Format 5: the checksum of the bloom and gram filters (`filters`: both, back to back) matches. */
export function framedFiltersIntact(head: Buffer, filters: Buffer): boolean {
  return crc32c(filters) === head.readUInt32LE(68);
}

/**
 * Formats 5 and 6: the column directory of a block (`head`: its first headerLength bytes, checked
 * by framedHeaderIntact), with format 6's column summaries; null if it does not add up (or a
 * format 6 head section does not decompress).
 */
export function blockDirectory(head: Buffer, m: BlockMeta): ReturnType<typeof parseDirectory> {
  if (head[3] !== 0x36 /* LBK6 */) return parseDirectory(head.subarray(BLOCK_FIXED_BYTES_V5, m.headerLength), m.compressedLength);
  const section = head.subarray(BLOCK_FIXED_BYTES_V6, m.headerLength);
  const plainLength = head.readUInt32LE(76);
  let plain: Buffer;
  if (head[80] === 0) plain = section;
  else if (head[80] === 1) {
    try {
      plain = lz4Codec.decompress(section);
    } catch {
      return null;
    }
  } else return null;
  if (plain.length !== plainLength) return null;
  return parseDirectory(plain, m.compressedLength, m.eventCount);
}

/**
 * The encoded columns of an intact block held whole in `buf` at `pos`, any format: format 5
 * frames are checked and decompressed on first use; older bodies are decompressed whole.
 */
export function encodedBlockAt(buf: Buffer, pos: number, m: BlockMeta, codec: BlockCodec): EncodedBlock {
  const start = pos + bodyOffset(m);
  if (m.framed === true) {
    const dir = blockDirectory(buf.subarray(pos, pos + m.headerLength), m);
    if (dir === null) throw new FrameDamage(`block at ${pos}: its column directory does not add up`);
    return framedColumns(m.eventCount, dir, (at, length) => buf.subarray(start + at, start + at + length), codec, `block at ${pos}`);
  }
  const body = codec.decompress(buf.subarray(start, start + m.compressedLength));
  if (body.length !== m.uncompressedLength) throw new LogsvcError('E_STATE_CORRUPT', `block at ${pos}: decompressed to ${body.length} bytes, expected ${m.uncompressedLength}`);
  return bodyColumns(unpack(body) as BlockBody);
}

/** Decompresses and decodes the events of an intact block. */
export function decodeBlockEvents(buf: Buffer, pos: number, m: BlockMeta, codec: BlockCodec): StoredEvent[] {
  const d = wholeBody(encodedBlockAt(buf, pos, m, codec));
  const n = d.n;
  const { raw, fields: cols } = decodeRawAndFields(d);
  const ts = decodeNumbers(d.ts, n);
  const tz = decodeStrings(d.tz, n);
  const it = decodeNumbers(d.it, n);
  const off = decodeNumbers(d.off, n);
  const idx = decodeNumbers(d.idx, n);
  const out: StoredEvent[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const fields: Record<string, string> = {};
    for (let j = 0; j < cols.length; j++) {
      const name = d.fields[j]![0];
      const values = cols[j]!;
      const v = values[i];
      if (v === null || v === undefined) continue;
      if (name === '__proto__') Object.defineProperty(fields, name, { value: v, enumerable: true, writable: true, configurable: true });
      else fields[name] = v;
    }
    out[i] = { timestamp: ts[i]!, timezone: tz[i] ?? 'Z', rawstring: raw[i]!, fields, ingestTimestamp: it[i]!, offset: off[i]!, index: idx[i]! };
  }
  return out;
}

/**
 * The raw strings and every field column of a block body. Raw strings encoded as templates are
 * built from the field columns; otherwise field columns may refer into the raw strings. Either
 * way one side is decoded without the other first, and a body that asks for both (a cycle) is
 * corrupt.
 */
export function decodeRawAndFields(d: BlockBody): { raw: string[]; fields: (string | null)[][] } {
  const n = d.n;
  if (d.raw.e === 't') {
    const fields = d.fields.map(([name, col]) => {
      if (col.e === 'x') throw new LogsvcError('E_STATE_CORRUPT', `field column ${JSON.stringify(name)} refers to raw strings that are built from the field columns`);
      return decodeStrings(col, n);
    });
    return { raw: decodeRaw(d.raw, n, (j) => fieldColumn(fields, j)), fields };
  }
  const raw = decodeRaw(d.raw, n);
  return { raw, fields: d.fields.map(([, col]) => decodeStrings(col, n, raw)) };
}

/** The j-th field column, or E_STATE_CORRUPT if a template names one the body lacks. */
export function fieldColumn<T>(fields: readonly T[], j: number): T {
  const col = fields[j];
  if (col === undefined) throw new LogsvcError('E_STATE_CORRUPT', `raw template refers to field column ${j}, the block has ${fields.length}`);
  return col;
}
