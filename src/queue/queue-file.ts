/**
 * One file of an embedded queue partition. Layout:
 *
 *   header   "LSDQ" | u32 LE format version
 *   records  u32 LE length | u32 LE CRC-32C(body) | body, where body = u64 LE offset | payload
 *
 * A record's offset is its position in the partition's stream (file base + position - header), and
 * the body repeats it. That makes resynchronisation after damage safe: past a bad frame, the scanner
 * looks for the next position whose frame has a valid CRC *and* names its own offset, which random
 * or stale bytes do not.
 */
import { crc32c } from '../storage/index.js';

export const QUEUE_FORMAT_VERSION = 1;
export const QUEUE_MAGIC = Buffer.from('LSDQ');
export const QUEUE_HEADER_BYTES = 8;
const FRAME_OVERHEAD = 16; // length + crc + offset
const MAX_PAYLOAD = 256 * 1024 * 1024;
/** The largest record payload appends accept (well under what the reader accepts as a frame). */
export const MAX_RECORD_BYTES = 128 * 1024 * 1024;

export function queueFileHeader(): Buffer {
  const h = Buffer.alloc(QUEUE_HEADER_BYTES);
  QUEUE_MAGIC.copy(h, 0);
  h.writeUInt32LE(QUEUE_FORMAT_VERSION, 4);
  return h;
}

/**
 * The 16 bytes that precede `payload` in its frame (length, CRC, offset): written together with
 * the payload itself (writev), so appending a record never copies it.
 */
export function queueFrameHead(offset: number, payload: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(FRAME_OVERHEAD);
  head.writeUInt32LE(payload.length + 8, 0);
  head.writeBigUInt64LE(BigInt(offset), 8);
  head.writeUInt32LE(crc32c(payload, crc32c(head.subarray(8))), 4);
  return head;
}

/** A whole frame in one buffer. */
export function encodeQueueFrame(offset: number, payload: Buffer): Buffer {
  return Buffer.concat([queueFrameHead(offset, payload), payload]);
}

export function frameBytes(payloadLength: number): number {
  return FRAME_OVERHEAD + payloadLength;
}

export interface ScannedRecord {
  offset: number;
  payload: Buffer;
}

export interface QueueFileScan {
  records: ScannedRecord[];
  /** Byte ranges (file positions) that held no intact record. */
  damaged: { from: number; to: number }[];
  /** File position just past the last intact record. */
  validEnd: number;
}

/** Decodes the frame at `pos` if it is intact and names its own offset; returns its end or -1. */
function frameAt(buf: Buffer, pos: number, base: number): number {
  if (buf.length - pos < FRAME_OVERHEAD) return -1;
  const len = buf.readUInt32LE(pos);
  if (len < 8 || len > MAX_PAYLOAD + 8 || pos + 8 + len > buf.length) return -1;
  if (Number(buf.readBigUInt64LE(pos + 8)) !== base + pos - QUEUE_HEADER_BYTES) return -1;
  if (crc32c(buf.subarray(pos + 8, pos + 8 + len)) !== buf.readUInt32LE(pos + 4)) return -1;
  return pos + 8 + len;
}

/** Scans a whole queue file (header included) whose first record has offset `base`. */
export function scanQueueFile(buf: Buffer, base: number, from = QUEUE_HEADER_BYTES): QueueFileScan {
  const records: ScannedRecord[] = [];
  const damaged: QueueFileScan['damaged'] = [];
  let pos = Math.max(from, QUEUE_HEADER_BYTES);
  let validEnd = pos;
  while (pos < buf.length) {
    const end = frameAt(buf, pos, base);
    if (end >= 0) {
      records.push({ offset: base + pos - QUEUE_HEADER_BYTES, payload: buf.subarray(pos + FRAME_OVERHEAD, end) });
      pos = end;
      validEnd = end;
      continue;
    }
    // Damage: look for the next intact, self-identifying frame.
    let next = pos + 1;
    while (next < buf.length && frameAt(buf, next, base) < 0) next++;
    damaged.push({ from: pos, to: next });
    pos = next;
  }
  return { records, damaged, validEnd };
}
