/**
 * This node's view of the cluster: node registration, liveness and the digest-partition layout.
 * Liveness comes through the `Liveness` seam: `SelfLiveness` for a lone node (it knows only itself
 * alive), the cluster `Membership` (protocol/membership.ts) when the node is part of a cluster.
 */
import type { Clock } from '../lib/clock.js';
import type { ClusterNode, GlobalStore } from '../global/index.js';
import { requireRoot, type Principal } from '../auth/index.js';
import { defaultLayout, validateLayout } from './partition-layout.js';
import { ownedBy, owners, type Handover } from './ownership.js';

export interface Liveness {
  isAlive(nodeId: number): boolean;
  /** Epoch ms of the last sign of life, or null if none was ever seen. */
  lastHeartbeat(nodeId: number): number | null;
}

/** Liveness as a lone node knows it: itself, right now. */
export class SelfLiveness implements Liveness {
  constructor(
    private readonly selfId: number,
    private readonly clock: Clock,
  ) {}
  isAlive(nodeId: number): boolean {
    return nodeId === this.selfId;
  }
  lastHeartbeat(nodeId: number): number | null {
    return nodeId === this.selfId ? this.clock.now() : null;
  }
}

export interface NodeView extends ClusterNode {
  isAvailable: boolean;
  lastHeartbeat: number | null;
}

export class ClusterService {
  constructor(
    private readonly store: GlobalStore,
    private readonly liveness: Liveness,
    private readonly clock: Clock,
  ) {}

  /** On a new cluster, lays out `count` partitions on node `selfId`; otherwise does nothing. */
  async ensureLayout(count: number, selfId: number): Promise<void> {
    await this.store.transact((s) => ({
      events: s.partitions.length === 0 ? [{ type: 'PartitionLayoutSet' as const, partitions: defaultLayout(count, selfId) }] : [],
      result: undefined,
    }));
  }

  /** Registers (or re-registers with a changed URI, name or uuid) this node. */
  async registerSelf(self: { id: number; uuid: string; name: string; uri: string }): Promise<void> {
    await this.store.transact((s) => {
      const known = s.nodes.get(self.id);
      const changed = known === undefined || known.uri !== self.uri || known.name !== self.name || known.uuid !== self.uuid;
      return { events: changed ? [{ type: 'NodeRegistered' as const, ...self, at: known?.registeredAt ?? this.clock.now() }] : [], result: undefined };
    });
  }

  /** Partitions `nodeId` digests now: the ownership rule (ownership.ts) over the layout and liveness. */
  ownedPartitions(nodeId: number, handovers: readonly Handover[] = []): number[] {
    return ownedBy(this.owners(handovers), nodeId);
  }

  /** The owner of every partition now (null where no host is alive). */
  owners(handovers: readonly Handover[] = []): (number | null)[] {
    const layout = this.store.state.partitions;
    const live = new Set<number>();
    for (const hosts of layout) for (const h of hosts) if (this.liveness.isAlive(h)) live.add(h);
    for (const h of handovers) if (this.liveness.isAlive(h.from)) live.add(h.from);
    return owners(layout, live, handovers);
  }

  nodes(): NodeView[] {
    return [...this.store.state.nodes.values()]
      .sort((a, b) => a.id - b.id)
      .map((n) => ({ ...n, isAvailable: this.liveness.isAlive(n.id), lastHeartbeat: this.liveness.lastHeartbeat(n.id) }));
  }

  notAlive(): { notAlive: number; total: number } {
    const all = this.nodes();
    return { notAlive: all.filter((n) => !n.isAvailable).length, total: all.length };
  }

  layout(): readonly number[][] {
    return this.store.state.partitions;
  }

  setLayout(p: Principal, proposed: unknown): Promise<readonly number[][]> {
    requireRoot(p, 'changing the ingest partition layout');
    return this.store.transact((s) => {
      const layout = validateLayout(proposed, s.partitions, new Set(s.nodes.keys()));
      return { events: [{ type: 'PartitionLayoutSet', partitions: layout }], result: layout };
    });
  }
}
