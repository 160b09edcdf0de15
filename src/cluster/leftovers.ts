/**
 * Segment files nothing needs any more, found and deleted (docs/replication.md, "Leftovers"):
 *
 * - **Void segments.** Every block a digest epoch wrote past the marks it ended with is void: the
 *   next owner went on from those marks and digested the events again (replication.md, "Epoch
 *   ends"). A segment all of whose blocks are void is read by nobody: a killed owner's open or not
 *   yet listed segments, the last segments of a handover that were not copied yet when the
 *   successor took over, and copies of those. After the grace, once no query snapshot holds it, it
 *   is unlisted here (`SegmentDropped`), deleted, and its void record forgotten.
 * - **Abandoned part files.** `.incoming/<id>.part` of a copy this node no longer makes (its
 *   segment became void or was dropped, or this node is no longer among its desired holders),
 *   deleted after the grace.
 *
 * Both are decided on this node's catalog and applied global state; a crash midway leaves a void
 * segment void (void.json keeps its record until its file is gone), so the next start finishes it.
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalStore } from '../global/index.js';
import { holdersOf } from '../global/segment-holdings.js';
import type { SegmentCatalog, SegmentInfo } from '../segments/catalog.js';
import { fsyncDir, unlinkIfPresent } from '../storage/index.js';

const PART = '.part';

export interface LeftoverOptions {
  selfId: number;
  store: GlobalStore;
  catalog: SegmentCatalog;
  /** Where copies under way are written (`<segments>/.incoming`). */
  incomingDir: string;
  clock: Clock;
  logger: Logger;
  /** How long a file stays after it is first seen to be a leftover. */
  graceMs: number;
}

export interface LeftoverStats {
  /** Void segment files deleted, and their bytes. */
  voidDeleted: number;
  voidDeletedBytes: number;
  /** Abandoned part files deleted. */
  partsDeleted: number;
}

export class LeftoverSweep {
  /** Segment id -> when (monotonic) it was first seen entirely void. */
  private readonly voidSince = new Map<string, number>();
  /** Part file name -> when (monotonic) it was first seen abandoned. */
  private readonly partSince = new Map<string, number>();
  private readonly counts: LeftoverStats = { voidDeleted: 0, voidDeletedBytes: 0, partsDeleted: 0 };

  constructor(private readonly opts: LeftoverOptions) {}

  stats(): LeftoverStats {
    return { ...this.counts };
  }

  /**
   * One pass. `busy(id)`: the segment is being registered, copied or dropped as surplus (left to
   * that work). `copying(id)`: this node still means to copy the segment (its part file is kept).
   */
  async sweep(busy: (id: string) => boolean, copying: (id: string) => boolean): Promise<void> {
    await this.sweepVoid(busy);
    await this.sweepParts(copying);
  }

  private async sweepVoid(busy: (id: string) => boolean): Promise<void> {
    const { catalog, store, selfId, clock, graceMs, logger } = this.opts;
    const now = clock.monotonic();
    const due: SegmentInfo[] = [];
    const seen = new Set<string>();
    for (const info of catalog.all()) {
      // Closed with no block left: the catalog keeps no void block, and a segment is catalogued
      // only once it has its first block, so nothing else looks like this.
      const id = info.meta.id;
      if (!info.closed || info.blocks.length > 0 || busy(id)) continue;
      seen.add(id);
      const since = this.voidSince.get(id);
      if (since === undefined) this.voidSince.set(id, now);
      else if (now - since >= graceMs) due.push(info);
    }
    for (const id of [...this.voidSince.keys()]) if (!seen.has(id)) this.voidSince.delete(id);
    if (due.length === 0) return;
    // Unlisted first: a crash before the unlink leaves a void file that is not listed, found again.
    const drops = due
      .filter((info) => {
        const entry = store.state.cluster.segments.segments.get(info.meta.id);
        return entry !== undefined && holdersOf(entry).includes(selfId);
      })
      .map((info) => ({ type: 'SegmentDropped' as const, node: selfId, id: info.meta.id, reason: 'void: its digest epoch ended before its first event' }));
    if (drops.length > 0) await store.publish(drops);
    for (const info of due) {
      this.voidSince.delete(info.meta.id);
      catalog.remove(info.meta.id);
      catalog.whenUnpinned(info.path, () => {
        this.deleteVoid(info).catch((err: unknown) => logger.warn('replication: a void segment file could not be deleted', { file: info.path, error: (err as Error).message }));
      });
    }
    logger.info('replication: void segment files deleted (every block past the end of the digest epoch that wrote it)', { segments: due.length });
  }

  private async deleteVoid(info: SegmentInfo): Promise<void> {
    await unlinkIfPresent(info.path);
    await fsyncDir(dirname(info.path)).catch(() => undefined);
    await this.opts.catalog.forget(info.meta.id);
    this.counts.voidDeleted++;
    this.counts.voidDeletedBytes += info.bytes;
  }

  private async sweepParts(copying: (id: string) => boolean): Promise<void> {
    const { incomingDir, clock, graceMs } = this.opts;
    let names: string[];
    try {
      names = await readdir(incomingDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const now = clock.monotonic();
    const seen = new Set<string>();
    for (const name of names) {
      if (!name.endsWith(PART) || copying(name.slice(0, -PART.length))) continue;
      seen.add(name);
      const since = this.partSince.get(name);
      if (since === undefined) {
        this.partSince.set(name, now);
        continue;
      }
      if (now - since < graceMs) continue;
      this.partSince.delete(name);
      await unlinkIfPresent(join(incomingDir, name));
      this.counts.partsDeleted++;
    }
    for (const name of [...this.partSince.keys()]) if (!seen.has(name)) this.partSince.delete(name);
  }
}
