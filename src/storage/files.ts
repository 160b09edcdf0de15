/**
 * File primitives with the durability rules spelled out: write to a temporary name, fsync, rename,
 * fsync the directory (a rename is only durable once its directory entry is). Disk usage via statfs.
 */
import { open, rename, mkdir, statfs, unlink, constants } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { randomBytes } from 'node:crypto';

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function ensureDir(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true });
  // A new directory is durable only once its parent's entry is.
  if (created !== undefined) await fsyncDir(dirname(dir));
}

/** Atomically replaces `path` with `data`: readers see the old or the new file, never a mix. */
export async function atomicWriteFile(path: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dir);
}

export interface DiskUsage {
  path: string;
  totalBytes: number;
  freeBytes: number;
  usedPercent: number;
}

export async function diskUsage(path: string): Promise<DiskUsage> {
  const s = await statfs(path);
  const total = s.blocks * s.bsize;
  // bavail: what an unprivileged writer can use; matches what df reports as available.
  const free = s.bavail * s.bsize;
  const usedPercent = total === 0 ? 0 : ((total - free) / total) * 100;
  return { path, totalBytes: total, freeBytes: free, usedPercent };
}
