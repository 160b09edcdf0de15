export { crc32c } from './checksum.js';
export { encodeFrame, scanFrames, FRAME_HEADER_BYTES, type FrameScan } from './frames.js';
export { atomicWriteFile, ensureDir, fsyncDir, diskUsage, writeAll, type DiskUsage } from './files.js';
export { DataDirLock } from './data-dir-lock.js';
