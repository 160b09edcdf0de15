/**
 * RetentionService: the background sweep that deletes segments past their repository's retention,
 * past the node's disk watermark (oldest first, any repository), and every segment of a repository
 * that no longer exists. It runs at start, every `intervalMs`, and right after a repository is
 * deleted, its retention changed or its retention bound raised; sweeps never overlap. The deletion
 * itself is SegmentDeletions' (crash-safe, deferred while a query reads the file). It also answers
 * the size questions of the API (compressedByteSize and friends) from the catalog.
 *
 * Retention is decided once, in global state, for every node: a sweep proposes each repository's
 * bound (policy.ts `retentionBound`) over the repository's segments, each counted once (in a
 * cluster: the segment listing of global state plus this node's not yet listed ones;
 * repository-segments.ts) and, when that would delete something, raises the repository's bound
 * with a RetentionBoundRaised event; then every node deletes what it holds below the bound in
 * global state, including a node that was down when it was raised (at its first sweep). The disk
 * watermark stays this node's own decision: it is about its disk.
 */
import type { GlobalEvent, GlobalState, GlobalStore, RetentionSettings } from '../global/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { SerialRuns } from '../lib/serial-runs.js';
import type { SegmentCatalog, SegmentInfo } from '../segments/catalog.js';
import type { SegmentDeletions } from '../segments/deletions.js';
import type { DiskUsage } from '../storage/index.js';
import { effectiveRetention, oldestToFree, retentionBound } from './policy.js';
import { localStat, repositorySegments, repositorySizes } from './repository-segments.js';

export interface RetentionSettingsOfNode {
  intervalMs: number;
  nodeDefault: RetentionSettings;
  /** 0: off. */
  diskWatermarkPercent: number;
}

export interface RetentionDeps {
  state: () => GlobalState;
  onApplied: (listener: (e: GlobalEvent) => void) => () => void;
  catalog: SegmentCatalog;
  /** A cluster: decide over (and answer sizes from) the segment listing in global state, not this node's catalog alone. */
  clustered: boolean;
  deletions: SegmentDeletions;
  clock: Clock;
  logger: Logger;
  /** The data dir's disk (only read when the watermark is on). */
  disk: () => Promise<DiskUsage>;
  /** Raises repositories' retention bounds in global state (RetentionBoundRaised, only where higher). */
  raiseBounds: (bounds: readonly { id: string; before: number }[]) => Promise<void>;
  settings: RetentionSettingsOfNode;
}

export interface SweepReport {
  deletedSegments: number;
  deletedBytes: number;
}

export class RetentionService {
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly runs = new SerialRuns(
    () => this.sweepOnce(),
    (err) => this.deps.logger.error('retention sweep failed', { error: (err as Error).message }),
  );

  constructor(private readonly deps: RetentionDeps) {}

  start(): void {
    this.unsubscribe = this.deps.onApplied((e) => {
      if (e.type === 'RepositoryDeleted' || e.type === 'RepositoryRetentionSet' || e.type === 'RetentionBoundRaised') this.kick();
    });
    this.kick();
    this.timer = setInterval(() => this.kick(), this.deps.settings.intervalMs);
    this.timer.unref();
  }

  /** Starts a sweep now (or right after the one running). */
  kick(): void {
    this.runs.kick();
  }

  /** One sweep; resolves when its deletions are decided (files of segments a query holds go later). */
  sweep(): Promise<SweepReport> {
    return this.runs.run();
  }

  private async sweepOnce(): Promise<SweepReport> {
    const { catalog, deletions, clock, logger, settings } = this.deps;
    const state = this.deps.state();
    const now = clock.now();
    const local = catalog.all();
    const byRepo = new Map<string, SegmentInfo[]>();
    for (const s of local) {
      const list = byRepo.get(s.meta.repo) ?? [];
      list.push(s);
      byRepo.set(s.meta.repo, list);
    }
    const doomed: SegmentInfo[] = [];
    const goneRepos: string[] = [];
    const raise: { id: string; before: number }[] = [];
    for (const [repoId, segs] of byRepo) {
      if (state.repositories.has(repoId)) continue;
      // A deleted repository: all of its data goes (open segments once the digest closes them).
      doomed.push(...segs.filter((s) => s.closed));
      if (segs.every((s) => s.closed)) goneRepos.push(repoId);
    }
    for (const [repoId, byId] of repositorySegments(state, local, this.deps.clustered)) {
      const repo = state.repositories.get(repoId);
      if (repo === undefined) continue;
      // Proposed only when it deletes something (anywhere) that the bound in global state does not.
      const stats = [...byId.values()];
      const proposal = retentionBound(stats, effectiveRetention(repo.retention, settings.nodeDefault), now);
      const current = repo.retentionBound ?? -Infinity;
      if (proposal !== null && proposal > current && stats.some((s) => s.closed && s.maxTs < proposal && s.maxTs >= current)) raise.push({ id: repoId, before: proposal });
    }
    if (raise.length > 0) {
      try {
        await this.deps.raiseBounds(raise);
      } catch (err) {
        // Global state cannot be written now (a cluster's broker away): the bounds already decided still apply.
        logger.warn('retention bounds could not be raised in global state; the next sweep tries again', { error: (err as Error).message });
      }
    }
    const decided = this.deps.state();
    for (const [repoId, segs] of byRepo) {
      const bound = decided.repositories.get(repoId)?.retentionBound ?? null;
      if (bound === null) continue;
      for (const s of segs) if (s.closed && localStat(s).maxTs < bound) doomed.push(s);
    }
    if (settings.diskWatermarkPercent > 0) {
      const disk = await this.deps.disk();
      if (disk.usedPercent > settings.diskWatermarkPercent) {
        const already = new Set(doomed.map((s) => s.meta.id));
        const freeing = doomed.reduce((n, s) => n + s.bytes, 0);
        const target = disk.totalBytes * (1 - settings.diskWatermarkPercent / 100);
        const need = target - disk.freeBytes - freeing;
        if (need > 0) {
          const rest = catalog.all().filter((s) => !already.has(s.meta.id));
          const ids = new Set(oldestToFree(rest.map(localStat), need));
          doomed.push(...rest.filter((s) => ids.has(s.meta.id)));
          logger.warn('disk past the retention watermark: deleting the oldest segments', { usedPercent: Number(disk.usedPercent.toFixed(1)), watermark: settings.diskWatermarkPercent, segments: ids.size });
        }
      }
    }
    const report: SweepReport = { deletedSegments: doomed.length, deletedBytes: doomed.reduce((n, s) => n + s.bytes, 0) };
    if (doomed.length > 0) {
      const { unlinked } = await deletions.delete(catalog, doomed);
      logger.info('retention deleted segments', { segments: report.deletedSegments, bytes: report.deletedBytes });
      if (goneRepos.length > 0) {
        void unlinked
          .then(async () => {
            for (const r of goneRepos) if (catalog.forRepository(r).length === 0 && !this.deps.state().repositories.has(r)) await deletions.removeRepositoryDir(r);
          })
          .catch((err: unknown) => logger.error('removing a deleted repository\'s segments failed', { error: (err as Error).message }));
      } else {
        void unlinked.catch((err: unknown) => logger.error('unlinking deleted segments failed', { error: (err as Error).message }));
      }
    } else {
      for (const r of goneRepos) await deletions.removeRepositoryDir(r);
    }
    return report;
  }

  /** Bytes of a repository's segments (in a cluster: its listed segments, each once): stored, and before compression. */
  repositorySizes(repositoryId: string): { compressed: number; uncompressed: number } {
    return repositorySizes(this.deps.state(), this.deps.catalog.forRepository(repositoryId), this.deps.clustered, repositoryId);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.runs.stop();
  }
}

/** Records the bounds that are higher than global state's (decided at apply time too: the highest wins). */
export async function raiseRetentionBounds(store: GlobalStore, bounds: readonly { id: string; before: number }[], at: number): Promise<void> {
  await store.transact((s) => {
    const events: GlobalEvent[] = [];
    for (const b of bounds) {
      const r = s.repositories.get(b.id);
      if (r !== undefined && (r.retentionBound === null || b.before > r.retentionBound)) events.push({ type: 'RetentionBoundRaised', id: b.id, before: b.before, at });
    }
    return { events, result: undefined };
  });
}
