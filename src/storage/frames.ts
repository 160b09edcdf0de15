/**
 * Checksummed record framing for append-only files: each record is
 *
 *   u32 LE payload length | u32 LE CRC-32C of payload | payload bytes
 *
 * The reader walks frames from an offset and stops at the first frame that is incomplete (a torn
 * tail) or whose checksum fails (damage); it never returns bytes from such a frame. Callers decide
 * what a stop means (truncate a torn tail, refuse a damaged middle).
 */
import { crc32c } from './checksum.js';

export const FRAME_HEADER_BYTES = 8;
/** Frames larger than this are treated as damage: no writer produces them. */
export const MAX_FRAME_PAYLOAD = 256 * 1024 * 1024;

export function encodeFrame(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.byteLength);
  out.writeUInt32LE(payload.byteLength, 0);
  out.writeUInt32LE(crc32c(payload), 4);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

export interface FrameScan {
  /** Payloads (views into the scanned buffer) and the offset each frame starts at. */
  frames: { offset: number; payload: Buffer }[];
  /** Offset just past the last good frame. */
  validEnd: number;
  /** Why scanning stopped before the end of the buffer, if it did. */
  stop?: { offset: number; reason: 'truncated-header' | 'truncated-payload' | 'checksum-mismatch' | 'implausible-length' };
}

export function scanFrames(buf: Buffer, start: number): FrameScan {
  const frames: FrameScan['frames'] = [];
  let pos = start;
  while (pos < buf.length) {
    if (buf.length - pos < FRAME_HEADER_BYTES) return { frames, validEnd: pos, stop: { offset: pos, reason: 'truncated-header' } };
    const len = buf.readUInt32LE(pos);
    const crc = buf.readUInt32LE(pos + 4);
    if (len > MAX_FRAME_PAYLOAD) return { frames, validEnd: pos, stop: { offset: pos, reason: 'implausible-length' } };
    const end = pos + FRAME_HEADER_BYTES + len;
    if (end > buf.length) return { frames, validEnd: pos, stop: { offset: pos, reason: 'truncated-payload' } };
    const payload = buf.subarray(pos + FRAME_HEADER_BYTES, end);
    if (crc32c(payload) !== crc) return { frames, validEnd: pos, stop: { offset: pos, reason: 'checksum-mismatch' } };
    frames.push({ offset: pos, payload });
    pos = end;
  }
  return { frames, validEnd: pos };
}
