/**
 * From normalized event groups to a durable digest-queue record: resolve each tag set to a
 * datasource (registering new ones in global state, within the per-repository cap), refuse work the
 * node cannot make durable soon (backpressure), pick a partition at random among those with a live
 * host, append, and resolve only when the append is durable.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { GlobalStore } from '../global/index.js';
import type { EventGroup, GroupSummary, RecordSummary } from '../events/index.js';
import { prepareRecord } from './pipeline.js';
import { encodeDatasourceIds, type DatasourceRoom } from './datasource-room.js';
import type { DigestQueue } from '../queue/index.js';

/** Random draws for a partition that is not busy before taking a busy one. */
const PARTITION_DRAWS = 4;

export interface IngestServiceDeps {
  store: GlobalStore;
  queue: DigestQueue;
  clock: Clock;
  maxDatasourcesPerRepository: number;
  maxUndigestedBytes: number;
  /** Acknowledged bytes not yet in segments. */
  undigestedBytes: () => number;
  maxDigestBacklogBytes: number;
  /** Events in sealed blocks held in memory, waiting to be built and written. */
  digestBacklogBytes: () => number;
  /** Non-null when the disk is too full to accept data: the reason. */
  diskProblem: () => string | null;
  /** Partitions that currently have a live digest host. */
  livePartitions: () => readonly number[];
  random?: () => number;
  /** Called once a record is durable: its repository, event count and bytes (the node's metrics). */
  onCommitted?: (repositoryId: string, events: number, bytes: number) => void;
}

export class IngestService {
  private readonly random: () => number;
  /** Per repository: its datasource ids as one shared buffer, for the size they were taken at. */
  private readonly idSets = new Map<string, { size: number; sab: SharedArrayBuffer }>();

  constructor(private readonly deps: IngestServiceDeps) {
    this.random = deps.random ?? Math.random;
  }

  /** Checks done before the body is even parsed: cheap refusals first. */
  admit(): void {
    const undigested = this.deps.undigestedBytes();
    if (undigested > this.deps.maxUndigestedBytes) {
      throw new LogsvcError('E_UNAVAILABLE', `ingest is paused: ${undigested} acknowledged bytes are waiting for digest (limit ${this.deps.maxUndigestedBytes}); retry later`);
    }
    const backlog = this.deps.digestBacklogBytes();
    if (backlog > this.deps.maxDigestBacklogBytes) {
      throw new LogsvcError('E_UNAVAILABLE', `ingest is paused: the digest is behind, ${backlog} bytes of events wait in memory to be written to segments (limit ${this.deps.maxDigestBacklogBytes}); retry later`);
    }
    const disk = this.deps.diskProblem();
    if (disk !== null) throw new LogsvcError('E_UNAVAILABLE', `ingest is paused: ${disk}`);
  }

  /**
   * What custom parsers' tags may take of the repository's datasources (datasource-room.ts).
   * Datasources are only ever added, so the ids are re-encoded only when their number changed.
   */
  datasourceRoom(repositoryId: string): DatasourceRoom | undefined {
    const repo = this.deps.store.state.repositories.get(repositoryId);
    if (repo === undefined) {
      this.idSets.delete(repositoryId);
      return undefined;
    }
    let ids = this.idSets.get(repositoryId);
    if (ids === undefined || ids.size !== repo.datasources.size) {
      ids = { size: repo.datasources.size, sab: encodeDatasourceIds(repo.datasources.keys()) };
      this.idSets.set(repositoryId, ids);
    }
    const limit = this.deps.maxDatasourcesPerRepository;
    return { limit, room: Math.max(0, limit - repo.datasources.size), existing: ids.sab };
  }

  /** Makes an encoded record durable in a random live partition; resolves once it is. */
  async commit(repositoryId: string, payload: Buffer, summary: RecordSummary): Promise<void> {
    if (summary.groups.length === 0) return;
    await this.ensureDatasources(repositoryId, summary.groups);
    const live = this.deps.livePartitions();
    if (live.length === 0) throw new LogsvcError('E_UNAVAILABLE', 'no digest partition has a live host; ingest cannot be accepted');
    await this.deps.queue.append(this.pickPartition(live), payload, summary);
    if (this.deps.onCommitted !== undefined) {
      let events = 0;
      for (const g of summary.groups) events += g.n;
      this.deps.onCommitted(repositoryId, events, payload.byteLength);
    }
  }

  /**
   * A random live partition, preferring one whose queue is not busy making an earlier append
   * durable: an append there would wait for that fsync before starting its own (measured: 5 % of
   * requests waited 26 ms on average at 4 concurrent requests over 24 partitions,
   * docs/benchmarks.md 2026-11-29). A few draws, not a scan: the choice stays uniform over the idle
   * partitions and costs nothing when few are busy.
   */
  private pickPartition(live: readonly number[]): number {
    const busy = this.deps.queue.busy?.bind(this.deps.queue);
    let partition = live[Math.floor(this.random() * live.length)]!;
    for (let draw = 1; busy !== undefined && draw < PARTITION_DRAWS && busy(partition); draw++) partition = live[Math.floor(this.random() * live.length)]!;
    return partition;
  }

  /** Encodes and commits already-normalized groups (small requests, tests). */
  async ingest(repositoryId: string, groups: EventGroup[], ingestTs: number): Promise<void> {
    const { payload, summary } = prepareRecord(repositoryId, groups, ingestTs);
    await this.commit(repositoryId, payload, summary);
  }

  private async ensureDatasources(repositoryId: string, groups: readonly GroupSummary[]): Promise<void> {
    const repo = this.deps.store.state.repositories.get(repositoryId);
    if (repo === undefined) throw new LogsvcError('E_NOT_FOUND', 'the repository of this ingest token no longer exists');
    if (groups.every((g) => repo.datasources.has(g.ds))) return;
    await this.deps.store.transact((s) => {
      const r = s.repositories.get(repositoryId);
      if (r === undefined) throw new LogsvcError('E_NOT_FOUND', 'the repository of this ingest token no longer exists');
      const fresh = groups.filter((g) => !r.datasources.has(g.ds));
      if (r.datasources.size + fresh.length > this.deps.maxDatasourcesPerRepository) {
        throw new LogsvcError(
          'E_VALIDATION',
          `repository "${r.name}" has reached its limit of ${this.deps.maxDatasourcesPerRepository} datasources (distinct tag combinations); ` +
            'use fewer distinct tag values (move high-cardinality values from tags to fields)',
        );
      }
      const at = this.deps.clock.now();
      return { events: fresh.map((g) => ({ type: 'DatasourceCreated' as const, repositoryId, id: g.ds, tags: g.tags, at })), result: undefined };
    });
  }
}
