/**
 * Crash-safe replacement of a segment by a rewritten copy (event redaction). The manifest
 * `<segments>/rewrites.json` says, per replacement under way, which file is the old one and which
 * the new, and whether the swap is decided:
 *
 *   1. manifest += {old, new, swapped: false}                       (write, fsync, rename)
 *   2. the new file is written whole (header, blocks, footer; fsync, directory fsync)
 *   3. manifest: swapped = true                                      <- the decision
 *   4. catalog: the new segment in, the old one out, in one synchronous step (queries see one)
 *   5. the old file is unlinked once no running query's snapshot holds it (SegmentCatalog.pin)
 *   6. manifest -= the entry
 *
 * At start, `open` (before the catalog is loaded) unlinks the new file of every undecided entry
 * and the old file of every decided one, so a crash at any step leaves exactly one of the two
 * listed and present. Rewritten blocks keep the queue positions of the blocks they came from, so
 * the digest's high-water marks after a restart are what they were.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { LogsvcError } from '../lib/errors.js';
import { atomicWriteFile, ensureDir, fsyncDir, unlinkIfPresent } from '../storage/index.js';
import { readBlockMeta } from './block.js';
import type { SegmentCatalog, SegmentInfo } from './catalog.js';
import { SegmentWriter } from './segment-writer.js';

export const REWRITES_FILE = 'rewrites.json';
const FORMAT_VERSION = 1;

interface Entry {
  old: string;
  new: string;
  swapped: boolean;
}

interface Manifest {
  version: number;
  entries: Entry[];
}

/** Test seam: a step after which the process exits at once (the crash tests' kill -9 points). */
export type RewriteStep = 'intent' | 'written' | 'swapped' | 'unlinked';

export class SegmentRewrites {
  private readonly entries = new Map<string, Entry>();
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly crashAfter: RewriteStep | null,
  ) {}

  /** Reads the manifest and settles every replacement a crash interrupted. Call before loading the catalog. */
  static async open(dir: string, crashAfter: RewriteStep | null = null): Promise<SegmentRewrites> {
    await ensureDir(dir);
    const r = new SegmentRewrites(dir, crashAfter);
    let text: string | null = null;
    try {
      text = await readFile(join(dir, REWRITES_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text === null) return r;
    let m: Manifest;
    try {
      m = JSON.parse(text) as Manifest;
    } catch (err) {
      throw new LogsvcError('E_STATE_CORRUPT', `${join(dir, REWRITES_FILE)} is not valid JSON: ${(err as Error).message}`);
    }
    if (m.version !== FORMAT_VERSION) throw new LogsvcError('E_STATE_CORRUPT', `${join(dir, REWRITES_FILE)} has version ${String(m.version)}; this node reads ${FORMAT_VERSION}`);
    if (m.entries.length === 0) return r;
    const dirs = new Set<string>();
    for (const e of m.entries) {
      const gone = r.abs(e.swapped ? e.old : e.new);
      await unlinkIfPresent(gone);
      dirs.add(dirname(gone));
    }
    for (const d of dirs) await fsyncDir(d).catch(() => undefined);
    await r.persist();
    return r;
  }

  /**
   * Replaces `old` by a segment of `blocks` (complete blocks, in order) in the same directory.
   * Resolves once the catalog lists the new segment (false, with nothing changed, when `old` left
   * the catalog meanwhile: deleted by retention); the old file goes when no query holds it.
   */
  async replace(catalog: SegmentCatalog, old: SegmentInfo, blocks: readonly Buffer[], now: number, salt?: string): Promise<{ replaced: boolean; id: string; unlinked: Promise<void> }> {
    if (blocks.length === 0) throw new LogsvcError('E_INTERNAL', `rewriting ${old.path}: no blocks left (delete the segment instead)`);
    // Salted (a cluster's redaction task): the new id follows from the old one and the task, and the
    // new segment says what it replaces, so copies and queries can tell the two apart (replication.md).
    const id = salt === undefined ? `${now.toString(36)}-p${old.meta.partition}-${randomBytes(6).toString('hex')}` : `${old.meta.id.split('~')[0]}~${createHash('sha256').update(`${old.meta.id}:${salt}`).digest('hex').slice(0, 12)}`;
    const newPath = join(dirname(old.path), `${id}.seg`);
    const entry: Entry = { old: this.rel(old.path), new: this.rel(newPath), swapped: false };
    this.entries.set(entry.new, entry);
    await this.persist();
    this.crashPoint('intent');
    let writer: SegmentWriter;
    try {
      writer = await SegmentWriter.create(dirname(old.path), { ...old.meta, id, ...(salt === undefined ? {} : { replaces: old.meta.id }) });
      for (const b of blocks) {
        const meta = readBlockMeta(b, 0);
        if (meta === null) throw new LogsvcError('E_INTERNAL', `rewriting ${old.path}: a new block has no valid header`);
        await writer.append(b, meta);
      }
      await writer.close(now);
    } catch (err) {
      await this.abandon(entry, newPath);
      throw err;
    }
    this.crashPoint('written');
    if (catalog.get(old.meta.id) === undefined) {
      await this.abandon(entry, newPath);
      return { replaced: false, id: old.meta.id, unlinked: Promise.resolve() };
    }
    entry.swapped = true;
    await this.persist();
    this.crashPoint('swapped');
    // One synchronous step: a query's snapshot has either the old segment or the new one.
    catalog.put({ path: newPath, meta: writer.meta, blocks: writer.blocks, closed: true, bytes: writer.bytes });
    catalog.remove(old.meta.id);
    const unlinked = new Promise<void>((resolve, reject) => {
      catalog.whenUnpinned(old.path, () => {
        unlinkIfPresent(old.path)
          .then(() => fsyncDir(dirname(old.path)).catch(() => undefined))
          .then(() => {
            this.crashPoint('unlinked');
            this.entries.delete(entry.new);
            return this.persist();
          })
          .then(resolve, reject);
      });
    });
    return { replaced: true, id, unlinked };
  }

  /** Paths whose replacement is under way (for tests and inspection). */
  pending(): number {
    return this.entries.size;
  }

  private async abandon(entry: Entry, newPath: string): Promise<void> {
    await unlinkIfPresent(newPath);
    this.entries.delete(entry.new);
    await this.persist();
  }

  private crashPoint(step: RewriteStep): void {
    if (this.crashAfter === step) process.kill(process.pid, 'SIGKILL');
  }

  private rel(path: string): string {
    return relative(this.dir, path);
  }

  private abs(rel: string): string {
    if (isAbsolute(rel) || rel.startsWith('..')) throw new LogsvcError('E_STATE_CORRUPT', `${REWRITES_FILE} names a path outside the segments directory: ${rel}`);
    return join(this.dir, rel);
  }

  private persist(): Promise<void> {
    const next = this.chain.then(() => atomicWriteFile(join(this.dir, REWRITES_FILE), JSON.stringify({ version: FORMAT_VERSION, entries: [...this.entries.values()] } satisfies Manifest)));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
