/**
 * File bytes on disk, content-addressed: `<data-dir>/files/<sha256 hex>`. A blob is written
 * atomically (temp file, fsync, rename, directory fsync) before any global event refers to it, and
 * removed only when no scope refers to it any more and no upload of the same bytes is under way.
 * A removal and an upload of the same bytes never overlap: the sweep marks a blob as being deleted
 * in the same synchronous step in which it finds it unreferenced and not held, and hold() waits for
 * such a deletion to finish before it looks at the disk (else it could see the file, skip writing
 * it, and have it unlinked under an acknowledged upload).
 */
import { createHash, randomBytes } from 'node:crypto';
import { open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { atomicWriteFile, ensureDir, fsyncDir } from '../storage/index.js';

const HASH = /^[0-9a-f]{64}$/;
/** Files of uploads being received (their hash is known only at their end). */
const UPLOAD = /^\.upload-[0-9a-f]+\.partial$/;

export function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class BlobStore {
  /** Hashes being uploaded: written, but not yet referenced by a global event. */
  private readonly pending = new Map<string, number>();
  /** Blobs the sweep is unlinking, with the unlink under way. */
  private readonly deleting = new Map<string, Promise<void>>();
  /** Names of the upload files being received now (the sweep leaves them). */
  private readonly receiving = new Set<string>();

  constructor(readonly dir: string) {}

  async open(): Promise<void> {
    await ensureDir(this.dir);
  }

  path(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`not a content hash: ${hash.slice(0, 80)}`);
    return join(this.dir, hash);
  }

  /** Writes `bytes` under `hash` (once) and keeps it from being swept until `release`. */
  async hold(hash: string, bytes: Uint8Array): Promise<void> {
    this.pending.set(hash, (this.pending.get(hash) ?? 0) + 1);
    try {
      // Held from here on, so no new deletion starts; one already started must end first.
      const removal = this.deleting.get(hash);
      if (removal !== undefined) await removal;
      const exists = await stat(this.path(hash)).then((s) => s.size === bytes.byteLength, () => false);
      if (!exists) await atomicWriteFile(this.path(hash), bytes);
    } catch (err) {
      this.release(hash);
      throw err;
    }
  }

  /**
   * A new path for an upload to be received into (in this directory, so it can become its blob by
   * a rename); give it back with dropUpload whatever happens.
   */
  uploadPath(): string {
    const name = `.upload-${randomBytes(8).toString('hex')}.partial`;
    this.receiving.add(name);
    return join(this.dir, name);
  }

  /** Removes an upload's file (if still there) and forgets it. */
  async dropUpload(path: string): Promise<void> {
    await unlink(path).catch(() => undefined);
    this.receiving.delete(path.slice(this.dir.length + 1));
  }

  /**
   * Makes a received upload the blob of `hash` (once: a blob already there is kept) and keeps it
   * from being swept until `release`, as hold() does for bytes in memory. The upload's file is
   * fsynced and renamed into place (then the directory fsynced); it is gone afterwards either way.
   */
  async holdUpload(hash: string, path: string, size: number): Promise<void> {
    this.pending.set(hash, (this.pending.get(hash) ?? 0) + 1);
    try {
      const removal = this.deleting.get(hash);
      if (removal !== undefined) await removal;
      const exists = await stat(this.path(hash)).then((s) => s.size === size, () => false);
      if (!exists) {
        const fh = await open(path, 'r+');
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(path, this.path(hash));
        await fsyncDir(this.dir);
      }
    } catch (err) {
      this.release(hash);
      throw err;
    } finally {
      await this.dropUpload(path);
    }
  }

  release(hash: string): void {
    const n = (this.pending.get(hash) ?? 1) - 1;
    if (n <= 0) this.pending.delete(hash);
    else this.pending.set(hash, n);
  }

  read(hash: string): Promise<Buffer> {
    return readFile(this.path(hash));
  }

  /** Removes every blob that `referenced` says nothing refers to (and leftover temp files). */
  async sweep(referenced: (hash: string) => boolean): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      const isBlob = HASH.test(name);
      const stale = isBlob
        ? !referenced(name) && !this.pending.has(name) && !this.deleting.has(name)
        : (name.endsWith('.tmp') && !this.isPendingTemp(name)) || (UPLOAD.test(name) && !this.receiving.has(name));
      if (!stale) continue;
      // Marked in the same synchronous step as the decision (see the module comment).
      const removal = unlink(join(this.dir, name)).catch(() => undefined);
      if (isBlob) this.deleting.set(name, removal);
      try {
        await removal;
      } finally {
        if (isBlob) this.deleting.delete(name);
      }
      removed++;
    }
    return removed;
  }

  private isPendingTemp(name: string): boolean {
    for (const h of this.pending.keys()) if (name.startsWith(`.${h}.`)) return true;
    return false;
  }
}
