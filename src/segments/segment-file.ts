/**
 * Segment files: one datasource's blocks from one digest partition.
 *
 *   header   "LSEG" | u32 version | u32 meta length | u32 CRC-32C(meta) | msgpack SegmentMeta
 *   blocks   block* (block.ts), each with its own CRC
 *   footer   msgpack SegmentFooter                          } written when the segment is closed
 *   trailer  u32 footer length | u32 CRC(footer) | "LSEF"   }
 *
 * An open segment has no footer: readers scan its blocks, and recovery cuts a torn last block. The
 * full byte layout is in docs/formats/segment.md; SEGMENT_FORMAT_VERSION changes with it.
 */
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import { crc32c } from '../storage/index.js';
import { BLOCK_HEADER_BYTES_V1, blockIntact, blockLength, blockMagicOf, readBlockMeta, type BlockMeta } from './block.js';

/**
 * Written by this version (format 6: each block column its own compressed, checksummed frame,
 * and summaries of some columns in the block's head). Still read: format 5 (no summaries, a plain
 * directory), format 4 (one LZ4 body per block), format 3 (the gram filter holds @rawstring's grams only),
 * format 2 (also no text or template columns in block bodies) and format 1 (also no gram filter).
 */
export const SEGMENT_FORMAT_VERSION = 6;
export const READABLE_SEGMENT_VERSIONS: readonly number[] = [1, 2, 3, 4, 5, 6];
export const SEGMENT_MAGIC = Buffer.from('LSEG');
export const FOOTER_MAGIC = Buffer.from('LSEF');
export const TRAILER_BYTES = 12;

export interface SegmentMeta {
  id: string;
  repo: string;
  ds: string;
  tags: Record<string, string>;
  partition: number;
  createdAt: number;
  /** A cluster: the node that wrote it and the digest epoch it was written in (absent on a lone node). */
  writer?: number;
  epoch?: number;
  /** A rewrite (redaction): the id of the segment this one replaces. */
  replaces?: string;
}

export interface BlockEntry extends BlockMeta {
  /** File position of the block header. */
  pos: number;
}

export interface SegmentFooter {
  blocks: BlockEntry[];
  eventCount: number;
  minTs: number;
  maxTs: number;
  closedAt: number;
}

export function encodeSegmentHeader(meta: SegmentMeta): Buffer {
  const body = pack(meta);
  const h = Buffer.alloc(16);
  SEGMENT_MAGIC.copy(h, 0);
  h.writeUInt32LE(SEGMENT_FORMAT_VERSION, 4);
  h.writeUInt32LE(body.length, 8);
  h.writeUInt32LE(crc32c(body), 12);
  return Buffer.concat([h, body]);
}

export function encodeFooter(f: SegmentFooter): Buffer {
  const body = pack(f);
  const t = Buffer.alloc(TRAILER_BYTES);
  t.writeUInt32LE(body.length, 0);
  t.writeUInt32LE(crc32c(body), 4);
  FOOTER_MAGIC.copy(t, 8);
  return Buffer.concat([body, t]);
}

export interface ParsedSegment {
  meta: SegmentMeta;
  /** Position just past the header (where blocks start). */
  blocksStart: number;
  blocks: BlockEntry[];
  /** Position just past the last intact block. */
  blocksEnd: number;
  footer: SegmentFooter | null;
  /** Byte ranges that held no intact block; past each, scanning resumed at the next intact block. */
  damage: { at: number; to: number; reason: string }[];
}

export function summarize(blocks: BlockEntry[]): Omit<SegmentFooter, 'closedAt' | 'blocks'> {
  let eventCount = 0;
  let minTs = Infinity;
  let maxTs = -Infinity;
  for (const b of blocks) {
    eventCount += b.eventCount;
    minTs = Math.min(minTs, b.minTs);
    maxTs = Math.max(maxTs, b.maxTs);
  }
  return { eventCount, minTs, maxTs };
}

/** The format version in a segment header (at least its first 8 bytes); throws E_STATE_CORRUPT if it is not one this build reads. */
export function segmentVersion(head: Buffer, name: string): number {
  if (head.length < 8 || !head.subarray(0, 4).equals(SEGMENT_MAGIC)) throw new LogsvcError('E_STATE_CORRUPT', `segment ${name}: bad header`);
  const version = head.readUInt32LE(4);
  if (!READABLE_SEGMENT_VERSIONS.includes(version)) throw new LogsvcError('E_STATE_CORRUPT', `segment ${name}: unsupported format version ${version}`);
  return version;
}

/** A footer as read: format 1 block entries gain the fields format 2 added (no gram filter, 64-byte headers). */
export function decodeFooter(body: Buffer, version: number): SegmentFooter {
  const f = unpack(body) as SegmentFooter;
  if (version === 1) for (const b of f.blocks) Object.assign(b, { gramLength: 0, headerLength: BLOCK_HEADER_BYTES_V1 });
  return f;
}

/** Parses a whole segment file; throws E_STATE_CORRUPT if even the header is unusable. */
export function parseSegment(buf: Buffer, name: string): ParsedSegment {
  if (buf.length < 16) throw new LogsvcError('E_STATE_CORRUPT', `segment ${name}: bad header`);
  const version = segmentVersion(buf, name);
  const blockMagic = blockMagicOf(version);
  const metaLen = buf.readUInt32LE(8);
  const metaBody = buf.subarray(16, 16 + metaLen);
  if (metaBody.length !== metaLen || crc32c(metaBody) !== buf.readUInt32LE(12)) throw new LogsvcError('E_STATE_CORRUPT', `segment ${name}: header checksum mismatch`);
  const meta = unpack(metaBody) as SegmentMeta;
  const blocksStart = 16 + metaLen;

  // A closed segment: trust the footer only if its checksum holds.
  let footer: SegmentFooter | null = null;
  let scanEnd = buf.length;
  if (buf.length >= blocksStart + TRAILER_BYTES && buf.subarray(buf.length - 4).equals(FOOTER_MAGIC)) {
    const len = buf.readUInt32LE(buf.length - TRAILER_BYTES);
    const start = buf.length - TRAILER_BYTES - len;
    if (start >= blocksStart && crc32c(buf.subarray(start, start + len)) === buf.readUInt32LE(buf.length - 8)) {
      footer = decodeFooter(buf.subarray(start, start + len), version);
      scanEnd = start;
    }
  }

  // Blocks are always verified by scanning (a footer says where they are, not that they are intact).
  // Past damage, scanning resumes at the next position holding an intact, checksummed block.
  const blocks: BlockEntry[] = [];
  const damage: ParsedSegment['damage'] = [];
  let pos = blocksStart;
  let blocksEnd = blocksStart;
  const intactAt = (p: number): BlockMeta | null => {
    const m = readBlockMeta(buf, p);
    return m !== null && buf.subarray(p, p + 4).equals(blockMagic) && p + blockLength(m) <= scanEnd && blockIntact(buf, p, m) ? m : null;
  };
  while (pos < scanEnd) {
    const m = intactAt(pos);
    if (m !== null) {
      blocks.push({ ...m, pos });
      pos += blockLength(m);
      blocksEnd = pos;
      continue;
    }
    const head = readBlockMeta(buf, pos);
    const reason = head === null ? 'no block header' : pos + blockLength(head) > scanEnd ? 'block extends past the end' : 'block checksum mismatch';
    let next = buf.indexOf(blockMagic, pos + 1);
    while (next >= 0 && next < scanEnd && intactAt(next) === null) next = buf.indexOf(blockMagic, next + 1);
    const to = next < 0 || next >= scanEnd ? scanEnd : next;
    damage.push({ at: pos, to, reason });
    pos = to;
  }
  return { meta, blocksStart, blocks, blocksEnd, footer, damage };
}
