/**
 * The cluster's digest bookkeeping in global state: the cluster's id, and per digest partition who
 * digests it now (an *epoch*: a numbered period of one owner), how far its events are in durable
 * segments (the checkpoint and, per datasource, the last durable queue position: the *marks*), and
 * where each epoch of each node ended. A node that takes a partition over resumes from these; a
 * node that lost one voids what it wrote past the marks its epoch ended with (see
 * docs/cluster.md). Also which nodes hold segments of which repository, and over what time, so a
 * query knows when a holder it cannot reach means a partial answer.
 *
 * Every rule here is decided at apply time, in log order, the same on every node: an epoch starts
 * only as the next number after the current one, progress counts only from the current owner in
 * its current epoch. So two nodes racing to take a partition, or a deposed owner still reporting,
 * settle the same everywhere.
 */

import { SegmentHoldings, type SegmentEvent, type SegmentHoldingsSnapshot } from './segment-holdings.js';

/** A queue position: record offset and event index in it. */
export interface MarkPosition {
  offset: number;
  index: number;
}

/** [datasource id, offset, index] */
export type MarkEntry = [string, number, number];

export type ClusterEvent =
  | { type: 'ClusterCreated'; clusterId: string; at: number }
  | { type: 'PartitionEpochStarted'; partition: number; node: number; epoch: number; at: number }
  | { type: 'PartitionProgress'; partition: number; node: number; epoch: number; checkpoint: number; marks: MarkEntry[] }
  | { type: 'RepositoryHeld'; node: number; repositoryId: string; minTime: number; maxTime: number }
  | SegmentEvent;

export interface PartitionEpoch {
  epoch: number;
  node: number;
  since: number;
  /** Lowest queue offset whose events are not all in durable segments, as last reported. */
  checkpoint: number;
  marks: Map<string, MarkPosition>;
  /**
   * Its owner has reported progress in it (so it digests the partition). Until then the events of
   * the partition past the marks are searchable nowhere: a query says its answer may be partial.
   */
  reported: boolean;
}

export interface EndedEpoch {
  epoch: number;
  /** The partition's marks when this node's epoch ended: what it wrote past them is void. */
  marks: Map<string, MarkPosition>;
}

export interface Holding {
  minTime: number;
  maxTime: number;
}

export interface ClusterSnapshot {
  clusterId: string | null;
  partitions: { partition: number; epoch: number; node: number; since: number; checkpoint: number; marks: MarkEntry[]; reported?: boolean }[];
  ended: { partition: number; node: number; epoch: number; marks: MarkEntry[] }[];
  holdings: { node: number; repositoryId: string; minTime: number; maxTime: number }[];
  /** Absent in snapshots written before segment replication. */
  epochEnds?: { partition: number; epoch: number; marks: MarkEntry[] }[];
  segments?: SegmentHoldingsSnapshot;
}

const after = (a: MarkPosition, b: MarkPosition): boolean => a.offset > b.offset || (a.offset === b.offset && a.index > b.index);

export class ClusterState {
  clusterId: string | null = null;
  readonly epochs = new Map<number, PartitionEpoch>();
  /** partition -> node -> the last epoch of that node on that partition that has ended. */
  readonly ended = new Map<number, Map<number, EndedEpoch>>();
  /** node -> repository id -> time range of the segments it holds. */
  readonly holdings = new Map<number, Map<string, Holding>>();
  /**
   * partition -> epoch -> the partition's marks when that epoch ended: every block written in the
   * epoch past them is void on every node that holds it (replicas too), since the next owner went
   * on from them.
   */
  readonly epochEnds = new Map<number, Map<number, Map<string, MarkPosition>>>();
  /** Which nodes hold which segment files (replication). */
  readonly segments = new SegmentHoldings();

  apply(e: ClusterEvent, seq = 0): void {
    switch (e.type) {
      case 'ClusterCreated':
        this.clusterId ??= e.clusterId;
        return;
      case 'PartitionEpochStarted': {
        const cur = this.epochs.get(e.partition);
        const curEpoch = cur?.epoch ?? 0;
        if (e.epoch !== curEpoch + 1) return; // lost a race: another epoch started first
        const marks = new Map(cur?.marks ?? []);
        if (cur !== undefined) {
          let byNode = this.ended.get(e.partition);
          if (byNode === undefined) this.ended.set(e.partition, (byNode = new Map()));
          byNode.set(cur.node, { epoch: cur.epoch, marks: new Map(marks) });
          let ends = this.epochEnds.get(e.partition);
          if (ends === undefined) this.epochEnds.set(e.partition, (ends = new Map()));
          ends.set(cur.epoch, new Map(marks));
        }
        this.epochs.set(e.partition, { epoch: e.epoch, node: e.node, since: e.at, checkpoint: cur?.checkpoint ?? 0, marks, reported: false });
        return;
      }
      case 'PartitionProgress': {
        const cur = this.epochs.get(e.partition);
        // Only the current owner, in its current epoch, moves a partition on.
        if (cur === undefined || cur.epoch !== e.epoch || cur.node !== e.node) return;
        cur.reported = true;
        cur.checkpoint = Math.max(cur.checkpoint, e.checkpoint);
        for (const [ds, offset, index] of e.marks) {
          const p = { offset, index };
          const old = cur.marks.get(ds);
          if (old === undefined || after(p, old)) cur.marks.set(ds, p);
        }
        return;
      }
      case 'RepositoryHeld': {
        let byRepo = this.holdings.get(e.node);
        if (byRepo === undefined) this.holdings.set(e.node, (byRepo = new Map()));
        const h = byRepo.get(e.repositoryId);
        if (h === undefined) byRepo.set(e.repositoryId, { minTime: e.minTime, maxTime: e.maxTime });
        else {
          h.minTime = Math.min(h.minTime, e.minTime);
          h.maxTime = Math.max(h.maxTime, e.maxTime);
        }
        return;
      }
      case 'SegmentStored':
      case 'SegmentDropped':
        this.segments.apply(e, seq);
        return;
      default: {
        const never: never = e;
        throw new Error(`unknown cluster event ${JSON.stringify(never)}`);
      }
    }
  }

  /** The node digesting `partition` now, or null before any epoch. */
  ownerOf(partition: number): number | null {
    return this.epochs.get(partition)?.node ?? null;
  }

  /** Nodes holding segments of `repositoryId` that overlap [start, end]. */
  holdersOf(repositoryId: string, start: number, end: number): number[] {
    const out: number[] = [];
    for (const [node, byRepo] of this.holdings) {
      const h = byRepo.get(repositoryId);
      if (h !== undefined && h.minTime <= end && h.maxTime >= start) out.push(node);
    }
    return out;
  }

  toSnapshot(): ClusterSnapshot {
    const marks = (m: Map<string, MarkPosition>): MarkEntry[] => [...m].map(([ds, p]) => [ds, p.offset, p.index]);
    return {
      clusterId: this.clusterId,
      partitions: [...this.epochs].map(([partition, e]) => ({ partition, epoch: e.epoch, node: e.node, since: e.since, checkpoint: e.checkpoint, marks: marks(e.marks), reported: e.reported })),
      ended: [...this.ended].flatMap(([partition, byNode]) => [...byNode].map(([node, x]) => ({ partition, node, epoch: x.epoch, marks: marks(x.marks) }))),
      holdings: [...this.holdings].flatMap(([node, byRepo]) => [...byRepo].map(([repositoryId, h]) => ({ node, repositoryId, ...h }))),
      epochEnds: [...this.epochEnds].flatMap(([partition, byEpoch]) => [...byEpoch].map(([epoch, m]) => ({ partition, epoch, marks: marks(m) }))),
      segments: this.segments.toSnapshot(),
    };
  }

  loadSnapshot(s: ClusterSnapshot): void {
    const marks = (m: MarkEntry[]): Map<string, MarkPosition> => new Map(m.map(([ds, offset, index]) => [ds, { offset, index }]));
    this.clusterId = s.clusterId;
    for (const p of s.partitions) this.epochs.set(p.partition, { epoch: p.epoch, node: p.node, since: p.since, checkpoint: p.checkpoint, marks: marks(p.marks), reported: p.reported ?? true });
    for (const x of s.ended) {
      let byNode = this.ended.get(x.partition);
      if (byNode === undefined) this.ended.set(x.partition, (byNode = new Map()));
      byNode.set(x.node, { epoch: x.epoch, marks: marks(x.marks) });
    }
    for (const h of s.holdings) {
      let byRepo = this.holdings.get(h.node);
      if (byRepo === undefined) this.holdings.set(h.node, (byRepo = new Map()));
      byRepo.set(h.repositoryId, { minTime: h.minTime, maxTime: h.maxTime });
    }
    for (const x of s.epochEnds ?? []) {
      let ends = this.epochEnds.get(x.partition);
      if (ends === undefined) this.epochEnds.set(x.partition, (ends = new Map()));
      ends.set(x.epoch, marks(x.marks));
    }
    this.segments.loadSnapshot(s.segments);
  }

  /** The marks `partition`'s epoch `epoch` ended with, or undefined while it runs (or is unknown). */
  endOf(partition: number, epoch: number): ReadonlyMap<string, MarkPosition> | undefined {
    return this.epochEnds.get(partition)?.get(epoch);
  }
}
