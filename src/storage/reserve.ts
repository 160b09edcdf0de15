/**
 * A reserve file in the data dir (issue 24, defect 4): space set aside while the disk has room, given
 * back when a start finds the disk full, so the few small writes a start needs (the lock, the local
 * admin token, this node's registration) can land. Such a start is read-only: the digest queue's
 * SpaceGate starts closed, ingest is refused with E_DISK_FULL until the disk has room again, queries
 * are served. The reserve is laid again at a start with room.
 */
import { open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isNoSpaceError } from './files.js';

export const RESERVE_FILE = 'reserved-space';
export const RESERVE_BYTES = 4 * 1024 * 1024;

/** Lays the reserve if it is missing; a disk without room for it is left as it is. */
export async function ensureReserve(dataDir: string, bytes = RESERVE_BYTES): Promise<void> {
  const path = join(dataDir, RESERVE_FILE);
  const have = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  if (have === bytes) return;
  const fh = await open(path, 'w');
  try {
    // Written, not just sized: a sparse file would reserve nothing.
    const chunk = Buffer.alloc(256 * 1024);
    for (let at = 0; at < bytes; at += chunk.length) await fh.write(chunk, 0, Math.min(chunk.length, bytes - at), at);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(path).catch(() => undefined);
    if (isNoSpaceError(err)) return;
    throw err;
  }
  await fh.close();
}

/** Gives the reserve back; returns the bytes freed (0 if there was none). */
export async function releaseReserve(dataDir: string): Promise<number> {
  const path = join(dataDir, RESERVE_FILE);
  try {
    const { size } = await stat(path);
    await unlink(path);
    return size;
  } catch {
    return 0;
  }
}
