/**
 * Crash-safe deletion of whole segments (retention, repository deletion). A deletion is decided by
 * one atomic write of the manifest `<segments>/deletions.json`, before any file goes:
 *
 *   1. manifest += the segments' paths (pending) and their queue high-water marks   (write, fsync, rename)
 *   2. the segments leave the catalog (new queries no longer see them)
 *   3. each file is unlinked once no running query's snapshot holds it (SegmentCatalog.pin)
 *   4. manifest -= the unlinked paths
 *
 * At start, `open` unlinks every path still pending before the catalog is loaded, so a crash at any
 * step leaves a segment either listed and present (before 1) or neither (after 1). The high-water
 * marks stay in the manifest for good (one entry per partition and datasource): a replay from an
 * older checkpoint must still skip events whose segment was deleted, or they would come back.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { LogsvcError } from '../lib/errors.js';
import { atomicWriteFile, ensureDir, fsyncDir, unlinkIfPresent } from '../storage/index.js';
import { positionAfter, type Position, type SegmentCatalog, type SegmentInfo } from './catalog.js';

export const DELETIONS_FILE = 'deletions.json';

/**
 * Test seam: a step of a deletion after which the process kills itself with SIGKILL (the crash
 * tests' kill -9 points): the decision durable (1), the segments out of the catalog (2), the first
 * file unlinked (3), every file unlinked and its directory synced but the manifest not yet updated (4).
 */
export type DeletionStep = 'decided' | 'uncataloged' | 'unlinked-first' | 'unlinked';
export const DELETION_STEPS: readonly DeletionStep[] = ['decided', 'uncataloged', 'unlinked-first', 'unlinked'];
const FORMAT_VERSION = 1;

interface Manifest {
  version: number;
  /** [partition, datasource id, offset, index] */
  hwm: [number, string, number, number][];
  /** Paths relative to the segments directory, decided deleted but maybe not yet unlinked. */
  pending: string[];
}

export class SegmentDeletions {
  private readonly hwm = new Map<string, { partition: number; ds: string; pos: Position }>();
  private readonly pending = new Set<string>();
  /** Manifest writes, one after another. */
  private chain: Promise<void> = Promise.resolve();
  private unlinkChain: Promise<void> = Promise.resolve();
  /** Bytes and count freed since start (for metrics and tests). */
  freedBytes = 0;
  deletedSegments = 0;

  private constructor(
    private readonly dir: string,
    private readonly crashAfter: DeletionStep | null,
  ) {}

  /** Reads the manifest and finishes deletions a crash interrupted. Call before loading the catalog. */
  static async open(dir: string, crashAfter: DeletionStep | null = null): Promise<SegmentDeletions> {
    await ensureDir(dir);
    const d = new SegmentDeletions(dir, crashAfter);
    let text: string | null = null;
    try {
      text = await readFile(join(dir, DELETIONS_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      let m: Manifest;
      try {
        m = JSON.parse(text) as Manifest;
      } catch (err) {
        throw new LogsvcError('E_STATE_CORRUPT', `${join(dir, DELETIONS_FILE)} is not valid JSON: ${(err as Error).message}`);
      }
      if (m.version !== FORMAT_VERSION) throw new LogsvcError('E_STATE_CORRUPT', `${join(dir, DELETIONS_FILE)} has version ${String(m.version)}; this node reads ${FORMAT_VERSION}`);
      for (const [partition, ds, offset, index] of m.hwm) d.noteHwm(partition, ds, { offset, index });
      for (const p of m.pending) d.pending.add(p);
    }
    if (d.pending.size > 0) {
      const dirs = new Set<string>();
      for (const rel of d.pending) {
        await unlinkIfPresent(d.abs(rel));
        dirs.add(dirname(d.abs(rel)));
      }
      for (const x of dirs) await fsyncDir(x).catch(() => undefined);
      d.pending.clear();
      await d.write();
    }
    return d;
  }

  /** Puts the remembered high-water marks into a freshly loaded catalog. */
  applyTo(catalog: SegmentCatalog): void {
    for (const { partition, ds, pos } of this.hwm.values()) catalog.noteDurable(partition, ds, pos);
  }

  /**
   * Deletes `segments` (closed ones: an open segment's writer still appends to it). Resolves once
   * the decision is durable and the segments are out of the catalog; the files go when no query
   * holds them (`unlinked` resolves then).
   */
  async delete(catalog: SegmentCatalog, segments: readonly SegmentInfo[]): Promise<{ unlinked: Promise<void> }> {
    const todo = segments.filter((s) => s.closed && catalog.get(s.meta.id) !== undefined);
    if (todo.length === 0) return { unlinked: Promise.resolve() };
    for (const s of todo) {
      for (const b of s.blocks) this.noteHwm(s.meta.partition, s.meta.ds, { offset: b.lastOffset, index: b.lastIndex });
      this.pending.add(this.rel(s.path));
    }
    await this.persist();
    this.crashPoint('decided');
    for (const s of todo) catalog.remove(s.meta.id);
    this.crashPoint('uncataloged');
    const unlinked = todo.map(
      (s) =>
        new Promise<void>((resolve, reject) => {
          catalog.whenUnpinned(s.path, () => {
            this.unlinkOneByOne(s.path).then(() => {
              this.crashPoint('unlinked-first');
              this.freedBytes += s.bytes;
              this.deletedSegments++;
              this.pending.delete(this.rel(s.path));
              resolve();
            }, reject);
          });
        }),
    );
    const all = Promise.all(unlinked).then(async () => {
      for (const x of new Set(todo.map((s) => dirname(s.path)))) await fsyncDir(x).catch(() => undefined);
      this.crashPoint('unlinked');
      await this.persist();
    });
    return { unlinked: all };
  }

  /**
   * Remembers the queue high-water marks of `segments` for good (durable when this resolves),
   * without deleting them: a rewrite that leaves out their last events must not let a replay bring
   * those events back.
   */
  async rememberMarks(segments: readonly SegmentInfo[]): Promise<void> {
    for (const s of segments) for (const b of s.blocks) this.noteHwm(s.meta.partition, s.meta.ds, { offset: b.lastOffset, index: b.lastIndex });
    await this.persist();
  }

  /**
   * Unlinks one file at a time: hundreds queued at once would fill libuv's thread pool, and the
   * digest queue's writes and fsyncs (what an ingest acknowledgement waits for) would queue behind them.
   */
  private unlinkOneByOne(path: string): Promise<void> {
    const next = this.unlinkChain.then(() => unlinkIfPresent(path));
    this.unlinkChain = next.catch(() => undefined);
    return next;
  }

  /** Removes a deleted repository's (now empty) segment directory. */
  async removeRepositoryDir(repoId: string): Promise<void> {
    await rm(join(this.dir, repoId), { recursive: true, force: true });
    await fsyncDir(this.dir).catch(() => undefined);
  }

  private crashPoint(step: DeletionStep): void {
    if (this.crashAfter === step) process.kill(process.pid, 'SIGKILL');
  }

  private noteHwm(partition: number, ds: string, pos: Position): void {
    const k = `${partition}/${ds}`;
    const cur = this.hwm.get(k);
    if (cur === undefined || positionAfter(pos, cur.pos)) this.hwm.set(k, { partition, ds, pos });
  }

  private rel(path: string): string {
    return relative(this.dir, path);
  }

  private abs(rel: string): string {
    if (isAbsolute(rel) || rel.startsWith('..')) throw new LogsvcError('E_STATE_CORRUPT', `${DELETIONS_FILE} names a path outside the segments directory: ${rel}`);
    return join(this.dir, rel);
  }

  private persist(): Promise<void> {
    const next = this.chain.then(() => this.write());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private write(): Promise<void> {
    const m: Manifest = {
      version: FORMAT_VERSION,
      hwm: [...this.hwm.values()].map((h) => [h.partition, h.ds, h.pos.offset, h.pos.index]),
      pending: [...this.pending].sort(),
    };
    return atomicWriteFile(join(this.dir, DELETIONS_FILE), JSON.stringify(m));
  }
}
