/**
 * IngestCounter: this node's share of the ingest volume. Every record the node makes durable in the
 * digest queue is counted (its repository, events and bytes) in memory, by UTC day; every
 * `intervalMs` and at stop the counts are reported to global state (RepositoryIngestCounted) and
 * start again from zero. Counts since the last report are lost if the process is killed: at most
 * one interval's worth.
 */
import type { GlobalStore, IngestCount } from '../global/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { DAY_MS } from './policy.js';

export class IngestCounter {
  /** day -> repository id -> counts not yet reported. */
  private pending = new Map<number, Map<string, IngestCount>>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly d: { store: GlobalStore; nodeId: number; clock: Clock; logger: Logger; intervalMs: number },
  ) {}

  /** One durable record of `events` events, `bytes` bytes, for repository `repositoryId`. */
  count(repositoryId: string, events: number, bytes: number): void {
    this.countOn(Math.floor(this.d.clock.now() / DAY_MS), { repositoryId, events, bytes });
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.d.intervalMs);
    this.timer.unref();
  }

  /** Reports the counts so far; those of a failed report are kept for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.d.store.publish([...batch].map(([day, repos]) => ({ type: 'RepositoryIngestCounted' as const, node: this.d.nodeId, day, counts: [...repos.values()] })));
      } catch (err) {
        for (const [day, repos] of batch) for (const c of repos.values()) this.countOn(day, c);
        this.d.logger.warn('ingest volume could not be reported to global state; it is tried again', { error: (err as Error).message });
      }
    });
    return this.flushing;
  }

  private countOn(day: number, c: IngestCount): void {
    let repos = this.pending.get(day);
    if (repos === undefined) this.pending.set(day, (repos = new Map()));
    const prev = repos.get(c.repositoryId);
    if (prev === undefined) repos.set(c.repositoryId, { ...c });
    else {
      prev.events += c.events;
      prev.bytes += c.bytes;
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.flush();
  }
}
