/**
 * Cluster protocol framing: every message is one frame, a big-endian u32 body length followed by a
 * msgpack body that decodes to a map with a string field `t` (the message type). `FrameParser` turns
 * a TCP byte stream (chunks split or merged anywhere) into whole messages, and refuses oversized
 * lengths and undecodable bodies before buffering them. Layout and message types: docs/cluster-protocol.md.
 */
import { LogsvcError } from '../../lib/errors.js';
import { pack, unpack } from '../../lib/msgpack.js';

/** Bumped on any incompatible change to frames or messages; peers of another version are refused. */
export const PROTOCOL_VERSION = 1;

export const FRAME_HEADER_BYTES = 4;
/** Default bound on one frame's body; a peer announcing more is cut off before anything is buffered. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** A decoded message: a msgpack map whose `t` names its type. */
export interface Message {
  t: string;
  [field: string]: unknown;
}

/** One frame holding `msg`; throws E_PROTOCOL when the body would exceed `maxFrameBytes`. */
export function encodeFrame<M extends { readonly t: string }>(msg: M, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  const body = pack(msg);
  if (body.length > maxFrameBytes) {
    throw new LogsvcError('E_PROTOCOL', `cluster message "${msg.t}" is ${body.length} bytes; a frame holds at most ${maxFrameBytes}`);
  }
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body], FRAME_HEADER_BYTES + body.length);
}

export function decodeBody(body: Uint8Array): Message {
  let value: unknown;
  try {
    value = unpack(body);
  } catch (err) {
    throw new LogsvcError('E_PROTOCOL', `cluster frame of ${body.length} bytes is not valid msgpack`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { t?: unknown }).t !== 'string') {
    throw new LogsvcError('E_PROTOCOL', 'cluster frame is not a message (a map with a string "t")');
  }
  return value as Message;
}

/**
 * Reassembles frames from stream chunks. Chunks are kept as received and copied once per frame,
 * only when the frame is complete; at most one frame (plus the next header) is ever buffered.
 * After a thrown error the stream is unusable: the caller closes the connection.
 */
export class FrameParser {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Body length of the frame being collected, once its header is complete. */
  private need = -1;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Bytes held for incomplete frames. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Feeds one chunk; returns the messages it completed, in order. Throws E_PROTOCOL on bad input. */
  push(chunk: Buffer): Message[] {
    if (chunk.length === 0) return [];
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Message[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxFrameBytes) {
          throw new LogsvcError('E_PROTOCOL', `cluster frame announces ${length} bytes; a frame holds at most ${this.maxFrameBytes}`);
        }
        this.need = length;
      }
      if (this.buffered < this.need) break;
      const body = this.take(this.need);
      this.need = -1;
      out.push(decodeBody(body));
    }
    return out;
  }

  /** Removes and returns the first `n` buffered bytes (a view when they lie in one chunk). */
  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first === undefined) return Buffer.alloc(0);
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const want = n - filled;
      if (c.length <= want) {
        c.copy(out, filled);
        filled += c.length;
        this.chunks.shift();
      } else {
        c.copy(out, filled, 0, want);
        this.chunks[0] = c.subarray(want);
        filled += want;
      }
    }
    return out;
  }
}
