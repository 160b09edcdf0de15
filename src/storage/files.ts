/**
 * File primitives with the durability rules spelled out: write to a temporary name, fsync, rename,
 * fsync the directory (a rename is only durable once its directory entry is). Disk usage via statfs.
 */
import { open, rename, mkdir, statfs, unlink, constants, type FileHandle } from 'node:fs/promises';
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

/**
 * Writes every byte of `data` (at `position`, or at the end for append-mode handles). A write can
 * be short without an error (a disk filling up mid-write): the rest is written again, so the next
 * attempt fails loudly (ENOSPC) instead of the caller believing everything reached the file.
 */
export async function writeAll(fh: FileHandle, data: Buffer | readonly Buffer[], position?: number): Promise<void> {
  let bufs: Buffer[] = Array.isArray(data) ? [...(data as readonly Buffer[])] : [data as Buffer];
  let left = bufs.reduce((n, b) => n + b.length, 0);
  let pos = position;
  while (left > 0) {
    const { bytesWritten } = pos === undefined ? await fh.writev(bufs) : await fh.writev(bufs, pos);
    if (bytesWritten <= 0) throw new Error(`write made no progress with ${left} bytes left`);
    left -= bytesWritten;
    if (pos !== undefined) pos += bytesWritten;
    let skip = bytesWritten;
    while (skip > 0 && bufs.length > 0) {
      const first = bufs[0]!;
      if (first.length <= skip) {
        skip -= first.length;
        bufs.shift();
      } else {
        bufs[0] = first.subarray(skip);
        skip = 0;
      }
    }
  }
}

/**
 * A write refused for want of space (ENOSPC, EDQUOT): the bytes did not land, but what was written
 * before is intact, so the writer can cut its partial frame back and refuse until space returns.
 * Unlike a failed fsync, after which a file's durable contents are unknown.
 */
export function isNoSpaceError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Unlinks `path`; a file already gone is fine. */
export async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
