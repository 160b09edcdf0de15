/** Piscina task: encode one block. Runs on a worker thread; returns the bytes (transferred). */
import { encodeBlock } from '../segments/block.js';
import { lz4Codec } from '../segments/codec.js';
import type { BlockColumns } from '../segments/block.js';
import { move } from 'piscina';

export default function encode(columns: BlockColumns): ArrayBuffer {
  const bytes = encodeBlock(columns, lz4Codec);
  // Hand the result over without a copy when the buffer owns its memory.
  const ab = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return move(ab) as ArrayBuffer;
}
