/**
 * This node's view of the cluster: node registration, liveness and the digest-partition layout.
 * Liveness comes through the `Liveness` seam: `SelfLiveness` for a lone node (it knows only itself
 * alive), the cluster `Membership` (protocol/membership.ts) when the node is part of a cluster.
 */
import type { Clock } from '../lib/clock.js';
import type { ClusterNode, GlobalStore } from '../global/index.js';
import { LogsvcError } from '../lib/errors.js';
import { requireRoot, type Principal } from '../auth/index.js';
import { defaultLayout, rotatedLayout, validateLayout } from './partition-layout.js';
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

  /**
   * A cluster: the layout follows the registered nodes while nobody has set one by hand. If the
   * layout is empty, or is exactly the rotated layout over the nodes other than `selfId` (what this
   * method made before this node joined), it becomes the rotated layout over all registered nodes:
   * a new node takes its share through the ordinary handover. A layout set through the API is left
   * alone.
   */
  async autoLayout(count: number, selfId: number): Promise<void> {
    await this.store.transact((s) => {
      const ids = [...s.nodes.keys()].sort((a, b) => a - b);
      if (!ids.includes(selfId)) ids.push(selfId);
      const n = s.partitions.length === 0 ? count : s.partitions.length;
      const same = (a: readonly number[][], b: readonly number[][]): boolean => JSON.stringify(a) === JSON.stringify(b);
      const target = rotatedLayout(n, ids);
      if (same(s.partitions, target)) return { events: [], result: undefined };
      // Made by this method (over the nodes it lists), whatever order the nodes joined in?
      const listed = [...new Set(s.partitions.flat())];
      const auto = s.partitions.length === 0 || (listed.every((id) => s.nodes.has(id)) && same(s.partitions, rotatedLayout(n, listed)));
      return { events: auto ? [{ type: 'PartitionLayoutSet' as const, partitions: target }] : [], result: undefined };
    });
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

  /**
   * Segments only `node` holds enough copies of (set by the node once segment replication runs):
   * how many listed segments would be held by fewer nodes than the factor without it.
   */
  drainCheck: ((node: number) => number) | null = null;

  /**
   * clusterUnregisterNode: removes `nodeId` from the node list, every partition's hosts and every
   * segment's holders. Unless `force`, a node whose segments are not yet held by enough other nodes
   * is first marked draining (its segments are copied elsewhere) and the call is refused, naming how
   * many are left; called again once they are copied, it succeeds. A partition it is the only host
   * of is refused either way.
   */
  async unregisterNode(p: Principal, nodeId: number, force: boolean): Promise<void> {
    requireRoot(p, 'unregistering a cluster node');
    const left = await this.store.transact((s) => {
      if (!s.nodes.has(nodeId)) throw new LogsvcError('E_NOT_FOUND', `no cluster node with id ${nodeId}`);
      const only = s.partitions.flatMap((hosts, i) => (hosts.length === 1 && hosts[0] === nodeId ? [i] : []));
      if (only.length > 0) throw new LogsvcError('E_VALIDATION', `node ${nodeId} is the only host of partitions ${only.join(', ')}: list another host first (POST /api/v1/clusterconfig/ingestpartitions)`);
      const pending = force ? 0 : (this.drainCheck?.(nodeId) ?? 0);
      if (pending > 0) return { events: s.draining.has(nodeId) ? [] : [{ type: 'NodeDrainingSet' as const, id: nodeId, at: this.clock.now() }], result: pending };
      return { events: [{ type: 'NodeUnregistered' as const, id: nodeId, at: this.clock.now() }], result: 0 };
    });
    if (left > 0) throw new LogsvcError('E_CONFLICT', `node ${nodeId} is being drained: ${left} segments are not yet held by enough other nodes; they are being copied, call again once they are (GET /api/v1/clusterconfig/segments), or force`);
  }

  setLayout(p: Principal, proposed: unknown): Promise<readonly number[][]> {
    requireRoot(p, 'changing the ingest partition layout');
    return this.store.transact((s) => {
      const layout = validateLayout(proposed, s.partitions, new Set(s.nodes.keys()));
      return { events: [{ type: 'PartitionLayoutSet', partitions: layout }], result: layout };
    });
  }
}
