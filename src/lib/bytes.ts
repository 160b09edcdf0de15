/** Byte-buffer facts shared by the code that transfers buffers between threads or keeps views of them. */

/** True if `b` spans its whole ArrayBuffer: it can be transferred, or kept as a view, without dragging other bytes along. */
export function ownsBuffer(b: Uint8Array): boolean {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
}
