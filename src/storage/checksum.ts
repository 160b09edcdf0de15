/** CRC-32C (Castagnoli), hardware-accelerated by @node-rs/crc32; the package's only importer. */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

export function crc32c(data: Uint8Array, initial = 0): number {
  return nativeCrc32c(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength), initial) >>> 0;
}
