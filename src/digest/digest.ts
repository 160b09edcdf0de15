/**
 * The digest of this node: one PartitionDigester per digest partition this node owns, fed live by
 * the queue's durable-append notifications and, at start, by replaying each partition from its
 * persisted checkpoint. Once a second it seals blocks past the flush interval, enforces the memory
 * budget for open blocks, persists checkpoints (`<data-dir>/digest/checkpoints.json`, atomically)
 * and lets the queue drop what every segment already holds.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { atomicWriteFile, ensureDir } from '../storage/index.js';
import { readSummary, type RecordSummary } from '../events/index.js';
import type { DigestQueue, DurableRecord, FollowHandle } from '../queue/index.js';
import type { Position, SegmentCatalog } from '../segments/catalog.js';
import type { BlockEncoder } from './block-encoder.js';
import type { BlockPart } from './block-parts.js';
import { PartitionDigester, type DigestSettings } from './partition-digester.js';

export interface DigestOptions {
  dataDir: string;
  queue: DigestQueue;
  catalog: SegmentCatalog;
  encoder: BlockEncoder;
  clock: Clock;
  logger: Logger;
  settings: DigestSettings;
  /** Open (unsealed) block bytes allowed across all partitions before the largest are sealed early. */
  openBlockBudgetBytes: number;
  /** Undigested bytes above which the oldest open blocks are written early, to let checkpoints advance. */
  sealUndigestedAboveBytes: number;
  onLatency: (ms: number) => void;
  onFatal: (err: Error) => void;
  /**
   * A cluster: owned partitions are read with `queue.follow` from where global state says (see
   * `ownFrom`), checkpoints are reported through `onProgress` instead of the local checkpoints file,
   * and local appends (`onDurable`) are not digested here (the owner reads them from the queue).
   */
  cluster?: { onProgress: (partition: number, checkpoint: number) => void; selfId?: number };
}

/** Ways a node gives a partition up: to a successor (everything written first), or deposed. */
export type ReleaseMode = 'handover' | 'abandon';

/**
 * Cluster mode, for live query boundaries: where this node's digester of a partition in one epoch
 * has read to (`end`: every event of the partition below it is in this node's memory or in
 * segments), and whether it still digests, is writing its last blocks for a handover (its memory
 * still answers queries), or handed the partition over (everything below `end` is in segments).
 */
export interface DigesterProgress {
  end: number;
  state: 'active' | 'draining' | 'released';
}

export class Digest {
  private readonly digesters = new Map<number, PartitionDigester>();
  /** Live records that arrived while their partition was replaying, processed right after it. */
  private readonly replaying = new Map<number, DurableRecord[]>();
  /** own() calls run one after another: two overlapping ones must not both replay a partition. */
  private owning: Promise<unknown> = Promise.resolve();
  private readonly checkpointFile: string;
  private persisted: Record<string, number> = {};
  private timer: NodeJS.Timeout | null = null;
  private readonly recordListeners = new Set<(r: DurableRecord, summary: RecordSummary) => void>();
  private ticking: Promise<void> | null = null;
  /** Cluster mode: the queue follower of each owned partition. */
  private readonly followers = new Map<number, FollowHandle>();
  /**
   * Cluster mode: partition -> the queue's end when this node took it. Its progress is reported
   * only once the digest got there: until then the partition's newest events are not searchable
   * here yet, and queries say their answer may be partial (cluster-state.ts `reported`).
   */
  private readonly catchingUp = new Map<number, { end: number; until: number }>();
  /** Cluster mode: the epoch each owned partition is digested in. */
  private readonly epochOf = new Map<number, number>();
  /** Cluster mode: digesters writing their last blocks for a handover; their memory is still searched. */
  private readonly draining = new Map<number, { d: PartitionDigester; epoch: number | undefined }>();
  /** Cluster mode: the last handover of each partition: its epoch and where its digester had read to. */
  private readonly handedOver = new Map<number, { epoch: number | undefined; end: number }>();

  constructor(private readonly opts: DigestOptions) {
    this.checkpointFile = join(opts.dataDir, 'digest', 'checkpoints.json');
    opts.queue.onDurable((r) => this.onDurable(r));
  }

  /** Replays every owned partition from its checkpoint, then starts the periodic work. */
  async start(owned: readonly number[]): Promise<void> {
    await ensureDir(join(this.opts.dataDir, 'digest'));
    if (this.opts.cluster !== undefined) {
      // Partitions come one by one through ownFrom(), as global state hands them to this node.
      this.startTimer();
      return;
    }
    try {
      this.persisted = JSON.parse(await readFile(this.checkpointFile, 'utf8')) as Record<string, number>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.opts.logger.error('digest checkpoints unreadable; replaying the whole queue', { error: (err as Error).message });
      this.persisted = {};
    }
    await this.own(owned);
    this.startTimer();
  }

  private startTimer(): void {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick()
        .catch((err: unknown) => {
          // A checkpoint that could not be written (a full disk) is written at a later tick; the
          // queue keeps the records until then, so nothing is lost, only replay time.
          this.opts.logger.warn('digest: periodic work failed; retrying next second', { error: (err as Error).message });
        })
        .finally(() => (this.ticking = null));
    }, 1000);
    this.timer.unref();
  }

  /**
   * Cluster mode: starts digesting `partition` from queue offset `from`, leaving out what `marks`
   * (per datasource, the last position already in some node's durable segments) says is done.
   */
  ownFrom(partition: number, from: number, marks: readonly [string, Position][], epoch?: number): Promise<void> {
    const run = this.owning.then(() => {
      const queue = this.opts.queue;
      if (this.digesters.has(partition)) return;
      for (const [ds, p] of marks) this.opts.catalog.noteDurable(partition, ds, p);
      const selfId = this.opts.cluster?.selfId;
      const d = this.newDigester(partition, from, selfId === undefined || epoch === undefined ? undefined : { writer: selfId, epoch });
      this.digesters.set(partition, d);
      if (epoch === undefined) this.epochOf.delete(partition);
      else this.epochOf.set(partition, epoch);
      // Bounded: a queue end that cannot be reached (a stale cache) does not hold progress back for long.
      this.catchingUp.set(partition, { end: queue.endOffset(partition), until: this.opts.clock.monotonic() + 10_000 });
      this.followers.set(
        partition,
        queue.follow(partition, from, async (rec) => {
          if (this.digesters.get(partition) !== d) return;
          const summary = readSummary(rec.payload);
          d.process(rec.offset, rec.nextOffset, summary, rec.payload, queue.recordBytes(rec));
          const durable: DurableRecord = { ...rec, attachment: summary };
          for (const l of this.recordListeners) l(durable, summary);
          if (this.openBytes() > this.opts.openBlockBudgetBytes) this.relieveMemory();
          // Backpressure: let the encoder and the disk catch up before taking more.
          while (d.pendingBytes() > this.opts.openBlockBudgetBytes && this.digesters.get(partition) === d) await d.settled();
        }, (err) => {
          // The follow ended (a fault in the queue reader): give the partition up; ownership takes it again.
          this.opts.logger.error('digest partition follow failed', { partition, error: err.message });
          if (this.digesters.get(partition) === d) void this.release(partition, 'abandon');
        }),
      );
      this.opts.logger.info('digest partition taken', { partition, from });
    });
    this.owning = run.catch(() => undefined);
    return run;
  }

  /**
   * Cluster mode: stops digesting `partition`. `handover`: every event read so far is written to
   * segments first; resolves with the checkpoint after them (the next owner starts there).
   * `abandon`: nothing more is written (another node owns it already). Null if not owned.
   */
  release(partition: number, mode: ReleaseMode): Promise<number | null> {
    const run = this.owning.then(async () => {
      const d = this.digesters.get(partition);
      if (d === undefined) return null;
      const epoch = this.epochOf.get(partition);
      this.digesters.delete(partition);
      this.epochOf.delete(partition);
      await this.followers.get(partition)?.stop();
      this.followers.delete(partition);
      if (mode === 'handover') {
        // Until its blocks are in segments, the memory of a digester handing over is what holds its
        // newest events: queries keep reading it meanwhile.
        this.draining.set(partition, { d, epoch });
        try {
          await d.drain();
        } finally {
          this.draining.delete(partition);
        }
        this.handedOver.set(partition, { epoch, end: d.processedEnd });
      } else await d.abandon();
      this.opts.logger.info('digest partition released', { partition, mode, checkpoint: d.checkpoint() });
      return d.checkpoint();
    });
    this.owning = run.catch(() => undefined);
    return run;
  }

  /** Partitions this node digests now. */
  ownedPartitions(): number[] {
    return [...this.digesters.keys()];
  }

  private newDigester(p: number, from: number, origin?: { writer: number; epoch: number }): PartitionDigester {
    return new PartitionDigester(p, from, {
      ...(origin === undefined ? {} : { origin }),
      catalog: this.opts.catalog,
      encoder: this.opts.encoder,
      clock: this.opts.clock,
      logger: this.opts.logger,
      settings: this.opts.settings,
      onLatency: this.opts.onLatency,
      onFatal: this.opts.onFatal,
    });
  }

  /** Takes ownership of more partitions (layout changes), replaying each from its checkpoint. */
  own(partitions: readonly number[]): Promise<void> {
    if (this.opts.cluster !== undefined) throw new Error('digest: a cluster takes partitions with ownFrom()');
    const run = this.owning.then(() => this.ownNow(partitions));
    this.owning = run.catch(() => undefined);
    return run;
  }

  private async ownNow(partitions: readonly number[]): Promise<void> {
    for (const p of partitions) {
      if (this.digesters.has(p) || this.replaying.has(p)) continue;
      const from = this.persisted[String(p)] ?? 0;
      const d = this.newDigester(p, from);
      const held: DurableRecord[] = [];
      this.replaying.set(p, held);
      let replayed = 0;
      try {
        for await (const rec of this.opts.queue.read(p, from)) {
          d.process(rec.offset, rec.nextOffset, readSummary(rec.payload), rec.payload, this.opts.queue.recordBytes(rec));
          replayed++;
        }
        // Records announced during the replay: process() skips those the replay already covered.
        for (const r of held) d.process(r.offset, r.nextOffset, (r.attachment as RecordSummary | undefined) ?? readSummary(r.payload), r.payload, this.opts.queue.recordBytes(r));
      } finally {
        this.replaying.delete(p);
      }
      if (replayed > 0) this.opts.logger.info('digest partition replayed', { partition: p, from, records: replayed });
      this.digesters.set(p, d);
    }
  }

  /**
   * Live records, right after the digest took each one (not replays): what live queries follow. A
   * snapshot taken by `memory()` plus the records heard afterwards holds every event exactly once.
   * Returns the unsubscribe function.
   */
  onRecord(listener: (r: DurableRecord, summary: RecordSummary) => void): () => void {
    this.recordListeners.add(listener);
    return () => this.recordListeners.delete(listener);
  }

  /**
   * What every owned partition holds in memory for `repo` (see PartitionDigester.memory), and
   * partitions being handed over until their last blocks are written; with the epoch each is
   * digested in (cluster mode).
   */
  memory(repo: string): { partition: number; epoch?: number; ds: string; tags: Record<string, string>; parts: BlockPart[] }[] {
    const out: { partition: number; epoch?: number; ds: string; tags: Record<string, string>; parts: BlockPart[] }[] = [];
    // Asked by every query: no entry array per partition (Map iteration by forEach), nothing more
    // when a partition holds nothing of `repo` (docs/benchmarks.md 2026-11-29 "req21").
    const add = (p: number, d: PartitionDigester, epoch: number | undefined): void => {
      const held = d.memory(repo);
      for (let i = 0; i < held.length; i++) out.push(epoch === undefined ? { partition: p, ...held[i]! } : { partition: p, epoch, ...held[i]! });
    };
    this.digesters.forEach((d, p) => add(p, d, this.epochOf.get(p)));
    this.draining.forEach(({ d, epoch }, p) => add(p, d, epoch));
    return out;
  }

  /** Cluster mode: this node's digester of `partition` in `epoch`, if it has or had one (DigesterProgress). */
  progressOf(partition: number, epoch: number): DigesterProgress | null {
    const d = this.digesters.get(partition);
    if (d !== undefined && this.epochOf.get(partition) === epoch) return { end: d.processedEnd, state: 'active' };
    const dr = this.draining.get(partition);
    if (dr !== undefined && dr.epoch === epoch) return { end: dr.d.processedEnd, state: 'draining' };
    const h = this.handedOver.get(partition);
    if (h !== undefined && h.epoch === epoch) return { end: h.end, state: 'released' };
    return null;
  }

  owns(partition: number): boolean {
    return this.digesters.has(partition);
  }

  private onDurable(r: DurableRecord): void {
    if (this.opts.cluster !== undefined) return; // the owner reads it from the queue
    const held = this.replaying.get(r.partition);
    if (held !== undefined) {
      held.push(r);
      return;
    }
    const d = this.digesters.get(r.partition);
    if (d === undefined) return; // another node digests it
    const summary = (r.attachment as RecordSummary | undefined) ?? readSummary(r.payload);
    d.process(r.offset, r.nextOffset, summary, r.payload, this.opts.queue.recordBytes(r));
    for (const l of this.recordListeners) l(r, summary);
    if (this.openBytes() > this.opts.openBlockBudgetBytes) this.relieveMemory();
  }

  private openBytes(): number {
    let n = 0;
    for (const d of this.digesters.values()) n += d.openBytes;
    return n;
  }

  private relieveMemory(): void {
    // Seal the largest blocks until open bytes are back under 3/4 of the budget.
    const target = (this.opts.openBlockBudgetBytes * 3) / 4;
    let open = this.openBytes();
    while (open > target) {
      let best: PartitionDigester | undefined;
      for (const d of this.digesters.values()) if (best === undefined || d.openBytes > best.openBytes) best = d;
      const freed = best?.sealLargest() ?? 0;
      if (freed === 0) break;
      open -= freed;
    }
  }

  /**
   * Bytes acknowledged but not yet in durable segments, all owned partitions: of each, the records
   * read from its checkpoint on (their sizes known) and those not read yet, up to the queue's end
   * (DigestQueue.bytesBetween: exact on the embedded queue, where this is end minus checkpoint;
   * estimated from the mean record size on Kafka).
   */
  undigestedBytes(): number {
    let n = 0;
    for (const [p, d] of this.digesters) n += this.undigestedOf(p, d);
    return n;
  }

  private undigestedOf(p: number, d: PartitionDigester): number {
    return d.undurableBytes() + this.opts.queue.bytesBetween(p, d.processedEnd, this.opts.queue.endOffset(p));
  }

  /** Per owned partition: its queue end offset and the bytes not yet in durable segments. */
  partitionLag(): { partition: number; lagBytes: number; endOffset: number }[] {
    const out = [];
    for (const [p, d] of this.digesters) out.push({ partition: p, endOffset: this.opts.queue.endOffset(p), lagBytes: this.undigestedOf(p, d) });
    return out;
  }

  /** Bytes sealed and waiting for the encoder or the disk. */
  pendingBytes(): number {
    let n = 0;
    for (const d of this.digesters.values()) n += d.pendingBytes();
    return n;
  }

  private async tick(): Promise<void> {
    for (const d of this.digesters.values()) d.tick();
    // Acknowledged bytes pile up behind the oldest open block of each partition (a quiet datasource
    // holds its block open for the flush interval): past the threshold, write those blocks now.
    if (this.undigestedBytes() > this.opts.sealUndigestedAboveBytes) {
      const share = this.opts.sealUndigestedAboveBytes / Math.max(1, this.digesters.size);
      for (const [p, d] of this.digesters) if (this.undigestedOf(p, d) > share) d.sealOldest();
    }
    await this.persistCheckpoints();
  }

  private async persistCheckpoints(): Promise<void> {
    const cluster = this.opts.cluster;
    if (cluster !== undefined) {
      for (const [p, d] of this.digesters) {
        const c = this.catchingUp.get(p);
        if (c !== undefined && d.processedEnd < c.end) {
          if (this.opts.clock.monotonic() < c.until) continue;
          this.opts.logger.warn('digest partition: not caught up with the queue end 10 s after taking it; reporting progress anyway', { partition: p, at: d.processedEnd, end: c.end });
        }
        this.catchingUp.delete(p);
        cluster.onProgress(p, d.checkpoint());
      }
      return;
    }
    const next: Record<string, number> = { ...this.persisted };
    let changed = false;
    for (const [p, d] of this.digesters) {
      const cp = d.checkpoint();
      if (next[String(p)] !== cp) {
        next[String(p)] = cp;
        changed = true;
      }
    }
    if (!changed) return;
    await atomicWriteFile(this.checkpointFile, `${JSON.stringify(next)}\n`);
    this.persisted = next;
    for (const [p] of this.digesters) await this.opts.queue.truncateBelow(p, next[String(p)]!);
  }

  /** Clean stop: write every open block, close segments, persist checkpoints. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.ticking !== null) await this.ticking;
    for (const f of this.followers.values()) await f.stop();
    this.followers.clear();
    // The partitions write their last blocks side by side, as they digest (the stop is bounded).
    await Promise.all([...this.digesters.values()].map((d) => d.drain()));
    await this.persistCheckpoints();
  }
}
