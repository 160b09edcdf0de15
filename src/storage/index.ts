export { crc32c } from './checksum.js';
export { encodeFrame, scanFrames, FRAME_HEADER_BYTES, type FrameScan } from './frames.js';
export { atomicWriteFile, ensureDir, fsyncDir, diskUsage, isNoSpaceError, unlinkIfPresent, writeAll, type DiskUsage } from './files.js';
export { SpaceGate } from './space-gate.js';
export { ensureReserve, releaseReserve, RESERVE_BYTES } from './reserve.js';
export { DataDirLock } from './data-dir-lock.js';
