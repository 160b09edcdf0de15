/**
 * Who digests which partition in a cluster, acted on. The rule is `desiredOwner` (the first live
 * host in the partition's host list); the fact is the partition's current epoch in global state.
 * This node closes the gap for its part, one step at a time, on a timer and whenever global state
 * or liveness changes:
 *
 * - an epoch of this node that it does not digest yet: void what earlier ended epochs of this node
 *   left past their marks, then digest from the epoch's checkpoint and marks;
 * - its epoch, but another live host comes first: **handover**: write every open block, report the
 *   final checkpoint and marks and start the successor's epoch, in one proposal;
 * - another node's epoch while this node still digests the partition (it was deposed, e.g. thought
 *   dead): stop without writing more, void what it wrote past the marks its epoch ended with;
 * - the owner is dead (or there is none) and this node is the first live host: **takeover**: start
 *   the next epoch; once applied, the first rule digests it.
 *
 * Epochs are decided at apply time (ClusterState), so racing takeovers settle the same everywhere.
 * While it digests, the node reports each partition's checkpoint and marks once a second.
 */
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalEvent, GlobalStore, MarkEntry } from '../global/index.js';
import type { Digest } from '../digest/index.js';
import type { SegmentCatalog } from '../segments/catalog.js';
import type { Liveness } from './cluster-service.js';
import { firstLiveHost } from './ownership.js';

/** The ownership rule (ownership.ts) as this node sees liveness: it is always alive to itself. */
export function desiredOwner(hosts: readonly number[], selfId: number, liveness: Liveness): number | null {
  return firstLiveHost(hosts, new Set(hosts.filter((h) => h === selfId || liveness.isAlive(h))));
}

export interface DigestOwnershipOptions {
  selfId: number;
  store: GlobalStore;
  digest: Digest;
  catalog: SegmentCatalog;
  liveness: Liveness;
  clock: Clock;
  logger: Logger;
  /** How often ownership is re-evaluated without a trigger. */
  intervalMs: number;
  /**
   * Segment replication (replication.ts): progress is reported only past segments held by enough
   * nodes, and a handover first waits (bounded) for the last segments to be copied.
   */
  replication?: {
    replicatedMarks(partition: number, epoch: number): MarkEntry[];
    replicatedCheckpoint(partition: number, epoch: number, checkpoint: number): number;
    settle(partition: number, epoch: number, timeoutMs: number): Promise<boolean>;
  };
  /**
   * No takeover until this long after start (the failure timeout): a node that just started has
   * not heard the others yet and would otherwise take every partition from live owners.
   */
  graceMs: number;
}

interface Reported {
  checkpoint: number;
  marks: Map<string, string>;
}

export class DigestOwnership {
  /** Partitions this node digests, with the epoch it digests them in. */
  private readonly owned = new Map<number, number>();
  private readonly checkpoints = new Map<number, number>();
  private readonly reported = new Map<number, Reported>();
  private readonly held = new Map<string, { minTime: number; maxTime: number }>();
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  private lastHoldingsAt = 0;
  private startedAt = 0;
  /** partition -> when (monotonic, here) its owner's last progress report was applied. */
  private readonly progressSeen = new Map<number, number>();
  /** partition -> when this node last reported it (unchanged progress is re-sent as a sign of life). */
  private readonly reportedAt = new Map<number, number>();

  constructor(private readonly opts: DigestOwnershipOptions) {}

  /** Segment replication, once the cluster protocol runs (before `start`). */
  useReplication(r: NonNullable<DigestOwnershipOptions['replication']>): void {
    this.opts.replication = r;
  }

  start(): void {
    this.startedAt = this.opts.clock.monotonic();
    this.unsubscribe = this.opts.store.onApplied((e) => {
      if (e.type === 'PartitionProgress') {
        const cur = this.opts.store.state.cluster.epochs.get(e.partition);
        if (cur?.node === e.node && cur.epoch === e.epoch) this.progressSeen.set(e.partition, this.opts.clock.monotonic());
      }
      if (e.type === 'PartitionEpochStarted' || e.type === 'PartitionLayoutSet') this.trigger();
    });
    this.timer = setInterval(() => {
      this.trigger();
      this.report();
    }, this.opts.intervalMs);
    this.timer.unref();
    this.trigger();
  }

  /** Liveness changed (membership): look again now. */
  trigger(): void {
    if (this.queued || this.stopped) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (this.stopped) return;
      try {
        await this.evaluate();
      } catch (err) {
        this.opts.logger.warn('digest ownership: step failed; will retry', { error: (err as Error).message });
      }
    });
  }

  /** The digest's checkpoint of a partition (Digest's cluster.onProgress). */
  noteCheckpoint(partition: number, checkpoint: number): void {
    this.checkpoints.set(partition, checkpoint);
  }

  /** Drops what this node knew of its own digest of `p` (it no longer digests it, or starts anew). */
  private forget(p: number): void {
    this.owned.delete(p);
    this.reported.delete(p);
    this.checkpoints.delete(p);
  }

  /** Partitions this node digests now, with their epochs. */
  ownedEpochs(): ReadonlyMap<number, number> {
    return this.owned;
  }

  private async evaluate(): Promise<void> {
    const { selfId, store, digest, liveness } = this.opts;
    const layout = store.state.partitions;
    for (let p = 0; p < layout.length; p++) {
      const state = store.state.cluster;
      const desired = desiredOwner(layout[p] ?? [], selfId, liveness);
      const ep = state.epochs.get(p);
      const actual = ep?.node ?? null;
      let mine = this.owned.get(p);
      if (ep !== undefined && actual === selfId && mine !== undefined && mine !== ep.epoch) {
        // Deposed and given back before this node looked again (another node's epoch came and went
        // between two evaluations, e.g. a takeover while this node was thought dead, then a handover
        // straight back): what it digested as the old epoch past that epoch's end marks is void, and
        // its reports of the old epoch are no longer applied. Start over in the current epoch.
        this.forget(p);
        await digest.release(p, 'abandon');
        this.opts.logger.warn('digest partition given back in a later epoch; the old epoch\'s unreported blocks are voided', { partition: p, was: mine, epoch: ep.epoch });
        mine = undefined;
      }
      if (ep !== undefined && actual === selfId) {
        if (mine === undefined || !digest.owns(p)) {
          await this.fenceEnded(p);
          if (desired !== null && desired !== selfId) {
            // Ours on paper, but a live host comes first: hand it on without digesting.
            await store.publish([{ type: 'PartitionEpochStarted', partition: p, node: desired, epoch: ep.epoch + 1, at: this.opts.clock.now() }]);
            continue;
          }
          // A checkpoint noted by an earlier digester of this partition (an earlier epoch of this
          // node) must not be reported for this one: the new digester starts from the epoch's
          // checkpoint, which may be lower (that epoch's last reports may never have been applied).
          this.forget(p);
          await digest.ownFrom(p, ep.checkpoint, [...ep.marks], ep.epoch);
          this.owned.set(p, ep.epoch);
        } else if (desired !== null && desired !== selfId) {
          await this.handOver(p, mine, desired);
        }
        continue;
      }
      if (mine !== undefined) {
        // Deposed: another epoch started while this node digested.
        this.forget(p);
        await digest.release(p, 'abandon');
        this.opts.logger.warn('digest partition lost to another node; its unreported blocks are voided', { partition: p, owner: actual });
      }
      await this.fenceEnded(p);
      const settled = this.opts.clock.monotonic() - this.startedAt >= this.opts.graceMs;
      // The owner is dead only if this node cannot reach it AND it stopped reporting progress through
      // global state: a node cut off from this one but still digesting is left alone (no flapping
      // between two nodes that cannot see each other but both reach Kafka).
      const silent = this.opts.clock.monotonic() - (this.progressSeen.get(p) ?? -Infinity) >= this.opts.graceMs;
      if (settled && desired === selfId && (actual === null || (!liveness.isAlive(actual) && silent))) {
        this.opts.logger.info('digest partition: taking over', { partition: p, from: actual, epoch: (ep?.epoch ?? 0) + 1 });
        await store.publish([{ type: 'PartitionEpochStarted', partition: p, node: selfId, epoch: (ep?.epoch ?? 0) + 1, at: this.opts.clock.now() }]);
      }
    }
  }

  /** Voids, for every partition, what ended epochs of this node left past their marks (at start). */
  async fenceAll(): Promise<void> {
    for (let p = 0; p < this.opts.store.state.partitions.length; p++) await this.fenceEnded(p);
  }

  /**
   * Voids what ended epochs left past their marks: blocks that carry their epoch (own or copied
   * from another node) by that epoch's end; older blocks of this node by its last ended epoch.
   */
  private async fenceEnded(p: number): Promise<void> {
    const ends = this.opts.store.state.cluster.epochEnds.get(p);
    if (ends !== undefined) {
      const n = await this.opts.catalog.voidEpochs(p, ends);
      if (n > 0) this.opts.logger.info('digest blocks voided: the next owner went on from an earlier point', { partition: p, blocks: n });
    }
    const ended = this.opts.store.state.cluster.ended.get(p)?.get(this.opts.selfId);
    if (ended === undefined || ended.epoch <= this.opts.catalog.fencedEpoch(p)) return;
    const n = await this.opts.catalog.voidAfter(p, ended.marks, ended.epoch);
    if (n > 0) this.opts.logger.info('digest blocks voided: another node went on from an earlier point', { partition: p, epoch: ended.epoch, blocks: n });
  }

  private async handOver(p: number, epoch: number, to: number, settleMs = 0): Promise<void> {
    const started = this.opts.clock.monotonic();
    const released = await this.opts.digest.release(p, 'handover');
    this.forget(p);
    // The successor goes on from what enough nodes hold; it re-reads the rest from the queue. A
    // stopping node waits a little for the last copies (less to re-read); a handover between live
    // nodes does not (nobody digests the partition meanwhile, so waiting delays every new event).
    if (settleMs > 0) await this.opts.replication?.settle(p, epoch, settleMs);
    const checkpoint = this.checkpointOf(p, epoch, released ?? 0);
    const events: GlobalEvent[] = [
      { type: 'PartitionProgress', partition: p, node: this.opts.selfId, epoch, checkpoint, marks: this.marks(p, epoch) },
      { type: 'PartitionEpochStarted', partition: p, node: to, epoch: epoch + 1, at: this.opts.clock.now() },
    ];
    await this.opts.store.publish(events);
    this.opts.logger.info('digest partition handed over', { partition: p, to, checkpoint, ms: this.opts.clock.monotonic() - started });
  }

  private marks(p: number, epoch: number): MarkEntry[] {
    if (this.opts.replication !== undefined) return this.opts.replication.replicatedMarks(p, epoch);
    return this.opts.catalog.marksOf(p).map(([ds, pos]) => [ds, pos.offset, pos.index]);
  }

  private checkpointOf(p: number, epoch: number, checkpoint: number): number {
    return this.opts.replication?.replicatedCheckpoint(p, epoch, checkpoint) ?? checkpoint;
  }

  /** Reports progress (checkpoint and changed marks) of every partition digested here. */
  private report(): void {
    const events: GlobalEvent[] = [];
    for (const [p, epoch] of this.owned) {
      const digested = this.checkpoints.get(p);
      if (digested === undefined) continue;
      const checkpoint = this.checkpointOf(p, epoch, digested);
      let last = this.reported.get(p);
      if (last === undefined) this.reported.set(p, (last = { checkpoint: -1, marks: new Map() }));
      const changed: MarkEntry[] = [];
      for (const [ds, pos, index] of this.marks(p, epoch)) {
        const key = `${pos}:${index}`;
        if (last.marks.get(ds) !== key) {
          changed.push([ds, pos, index]);
          last.marks.set(ds, key);
        }
      }
      const now = this.opts.clock.monotonic();
      // Unchanged progress is re-sent now and then: the other nodes see this owner is still at work.
      const due = now - (this.reportedAt.get(p) ?? -Infinity) >= Math.max(250, this.opts.graceMs / 3);
      if (changed.length === 0 && checkpoint === last.checkpoint && !due) continue;
      this.reportedAt.set(p, now);
      last.checkpoint = checkpoint;
      events.push({ type: 'PartitionProgress', partition: p, node: this.opts.selfId, epoch, checkpoint, marks: changed });
    }
    events.push(...this.holdingChanges());
    if (events.length === 0) return;
    this.opts.store.publish(events).catch((err: unknown) => {
      // Reported again (in full) next time: progress only saves replay, it is never needed for safety.
      for (const e of events) if (e.type === 'PartitionProgress') this.reported.delete(e.partition);
      this.opts.logger.warn('digest progress could not be reported', { error: (err as Error).message });
    });
  }

  /** Which repositories this node holds segments of, over what time, as it grows (every 5 s). */
  private holdingChanges(): GlobalEvent[] {
    const now = this.opts.clock.monotonic();
    if (now - this.lastHoldingsAt < 5000) return [];
    this.lastHoldingsAt = now;
    const ranges = new Map<string, { minTime: number; maxTime: number }>();
    for (const seg of this.opts.catalog.all()) {
      for (const b of seg.blocks) {
        const r = ranges.get(seg.meta.repo);
        if (r === undefined) ranges.set(seg.meta.repo, { minTime: b.minTs, maxTime: b.maxTs });
        else {
          r.minTime = Math.min(r.minTime, b.minTs);
          r.maxTime = Math.max(r.maxTime, b.maxTs);
        }
      }
    }
    const out: GlobalEvent[] = [];
    for (const [repo, r] of ranges) {
      const h = this.held.get(repo);
      if (h !== undefined && h.minTime <= r.minTime && h.maxTime >= r.maxTime) continue;
      this.held.set(repo, r);
      out.push({ type: 'RepositoryHeld', node: this.opts.selfId, repositoryId: repo, minTime: r.minTime, maxTime: r.maxTime });
    }
    return out;
  }

  /**
   * Clean stop: hands every partition to the next live host (so it need not wait for the failure
   * timeout), or, with no live successor, writes everything and reports where it ended.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.chain;
    const { store, selfId, liveness } = this.opts;
    // Waiting for the last copies shares one short bound across every partition.
    const deadline = Date.now() + 1500;
    for (const [p, epoch] of [...this.owned]) {
      const next = (store.state.partitions[p] ?? []).find((h) => h !== selfId && liveness.isAlive(h));
      try {
        if (next !== undefined) await this.handOver(p, epoch, next, Math.max(0, deadline - Date.now()));
        else {
          const released = await this.opts.digest.release(p, 'handover');
          this.forget(p);
          if (deadline > Date.now()) await this.opts.replication?.settle(p, epoch, deadline - Date.now());
          await store.publish([{ type: 'PartitionProgress', partition: p, node: selfId, epoch, checkpoint: this.checkpointOf(p, epoch, released ?? 0), marks: this.marks(p, epoch) }]);
        }
      } catch (err) {
        this.opts.logger.warn('digest partition not handed over at stop', { partition: p, error: (err as Error).message });
      }
    }
  }
}
