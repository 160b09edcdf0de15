/**
 * The transport of global state shared by a cluster: one totally ordered log of proposals that every
 * node reads in the same order (the Kafka topic `global-events`, src/global/kafka-log.ts). A node
 * proposes; it learns the outcome by reading its own proposal back, in order, like every other node
 * (GlobalStore decides at apply time whether a proposal applies). Snapshots are each node's own: a
 * snapshot records the log position it was taken at, so a restart replays only what came after.
 *
 * `MemorySharedLog` is the same contract in one process (several stores on one ordered array), for
 * tests of the store's shared mode without a broker.
 */
import type { GlobalEvent } from './events.js';
import type { SnapshotData } from './model.js';

export interface GlobalProposal {
  /** The proposing node's uuid and a number unique on that node: how it finds its own. */
  proposer: string;
  id: number;
  /**
   * The `decisions` count of the state the events were decided on; null for reports that apply
   * whatever came before (digest progress, epochs: their own rules decide at apply time).
   */
  base: number | null;
  events: GlobalEvent[];
}

export interface SharedLogOpened {
  snapshot: SnapshotData | null;
  /** Log position of the first proposal after the snapshot (0 without one). */
  position: number;
}

export interface SharedGlobalLog {
  /** Loads this node's newest intact snapshot. */
  open(): Promise<SharedLogOpened>;
  /**
   * Delivers every proposal from `position` on, in log order, now and as they arrive (the callback
   * gets each proposal's own position). Resolves once every proposal that was in the log when it
   * was called has been delivered (the node has caught up).
   */
  follow(position: number, onProposal: (p: GlobalProposal, position: number) => void): Promise<void>;
  /** The log position after its last proposal now (a node that applied up to it has seen every one). */
  end(): Promise<number>;
  /** Resolves once the proposal is durable in the log (it will be delivered to every node). */
  propose(p: GlobalProposal): Promise<void>;
  /** Stores a snapshot of the state after every proposal before `position`. */
  writeSnapshot(data: SnapshotData, position: number): Promise<void>;
  close(): Promise<void>;
}

/** The shared log of several in-process nodes: an array, delivered asynchronously in order. */
export class MemorySharedLog {
  private readonly records: GlobalProposal[] = [];
  private readonly followers = new Set<{ next: number; deliver: (p: GlobalProposal, pos: number) => void }>();

  /** A node's view of the log, with its own snapshot slot. */
  view(): SharedGlobalLog {
    let snapshot: { data: SnapshotData; position: number } | null = null;
    let follower: { next: number; deliver: (p: GlobalProposal, pos: number) => void } | null = null;
    return {
      open: () => Promise.resolve(snapshot === null ? { snapshot: null, position: 0 } : { snapshot: structuredClone(snapshot.data), position: snapshot.position }),
      follow: (position, onProposal) => {
        follower = { next: position, deliver: onProposal };
        this.followers.add(follower);
        this.pump();
        return new Promise((resolve) => setImmediate(resolve));
      },
      end: () => Promise.resolve(this.records.length),
      propose: (p) => {
        this.records.push(structuredClone(p));
        setImmediate(() => this.pump());
        return Promise.resolve();
      },
      writeSnapshot: (data, position) => {
        snapshot = { data: structuredClone(data), position };
        return Promise.resolve();
      },
      close: () => {
        if (follower !== null) this.followers.delete(follower);
        return Promise.resolve();
      },
    };
  }

  private pump(): void {
    for (const f of this.followers) {
      while (f.next < this.records.length) {
        const pos = f.next++;
        f.deliver(structuredClone(this.records[pos]!), pos);
      }
    }
  }
}
