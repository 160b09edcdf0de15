/**
 * One node per data directory. The lock file holds the owner's pid; a lock whose pid is no longer
 * alive (the node was killed) is taken over, so a kill -9 never needs manual clean-up.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LogsvcError } from '../lib/errors.js';

const LOCK_FILE = 'logsvc.lock';

/** Whether a process with this PID exists (EPERM: it exists, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class DataDirLock {
  private constructor(private readonly path: string) {}

  static async acquire(dataDir: string): Promise<DataDirLock> {
    const path = join(dataDir, LOCK_FILE);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fh = await open(path, 'wx', 0o644);
        await fh.writeFile(`${process.pid}\n`);
        await fh.sync();
        await fh.close();
        return new DataDirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner)) {
        throw new LogsvcError('E_DATA_DIR_LOCKED', `data dir ${dataDir} is in use by another logsvc process (pid ${owner})`);
      }
      await unlink(path).catch(() => undefined);
    }
    throw new LogsvcError('E_DATA_DIR_LOCKED', `data dir ${dataDir}: could not take the lock file ${path}`);
  }

  async release(): Promise<void> {
    await unlink(this.path).catch(() => undefined);
  }
}
