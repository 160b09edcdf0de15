/**
 * How well the cluster's segments are held, counted over global state (docs/replication.md,
 * "Visibility"): per segment its live holders against the factor, per node what it holds, should
 * hold, would receive or give away, holds alone, and whether it could leave without a segment
 * falling below the factor. Pure: the replicator passes the segments it counts, with their desired
 * holders, and liveness as it sees it; the health check, REST, /metrics and GraphQL read the answer.
 */
import { holdersOf, type SegmentEntry } from '../global/segment-holdings.js';

/** Segments and their bytes. */
export interface Tally {
  segments: number;
  bytes: number;
}

/**
 * The counted segments split four ways, by their live holders (`live`) and by their desired
 * holders (`target`): none, fewer than the factor, the factor but more holders than it (surplus
 * copies), exactly the factor.
 */
export interface ClusterSizes {
  factor: number;
  live: { missing: Tally; under: Tally; over: Tally; properly: Tally };
  target: { missing: Tally; under: Tally; over: Tally; properly: Tally };
}

export interface NodeSizes {
  node: number;
  /** Listed as holding: segments, bytes, events. */
  segments: number;
  bytes: number;
  events: number;
  /** Bytes of the segments it is a desired holder of. */
  targetBytes: number;
  /** Bytes it should hold and does not (to be copied in). */
  inboundBytes: number;
  /** Bytes it holds and is not a desired holder of (surplus or drained copies, to go). */
  outboundBytes: number;
  /** Bytes of the segments no other node holds. */
  solitaryBytes: number;
  /** Segments it holds that fewer than the factor of other live nodes hold (draining it must copy them). */
  heldTooFewWithout: number;
  /** Partitions it is the only host of (unregistering it is refused). */
  onlyHostOf: number[];
  /** Registered, nothing held too few times without it, the only host of no partition. */
  canBeSafelyUnregistered: boolean;
}

export interface SizesInput {
  /** Copies wanted (the configured factor, at most the registered nodes). */
  factor: number;
  /** The configured factor: without a node, `min(configured, registered - 1)` copies are wanted. */
  configuredFactor: number;
  /** Registered nodes. */
  nodes: readonly number[];
  /** Nodes alive as the asking node sees them (itself included). */
  live: ReadonlySet<number>;
  /** The digest-partition layout (hosts per partition). */
  partitions: readonly (readonly number[])[];
  /** The segments to count (listed, not entirely void, not superseded by a rewrite), each with its desired holders. */
  segments: Iterable<{ entry: SegmentEntry; desired: readonly number[] }>;
}

const tally = (): Tally => ({ segments: 0, bytes: 0 });
const add = (t: Tally, bytes: number): void => {
  t.segments++;
  t.bytes += bytes;
};

export function replicationSizes(x: SizesInput): { cluster: ClusterSizes; nodes: NodeSizes[] } {
  const cluster: ClusterSizes = {
    factor: x.factor,
    live: { missing: tally(), under: tally(), over: tally(), properly: tally() },
    target: { missing: tally(), under: tally(), over: tally(), properly: tally() },
  };
  const without = Math.max(1, Math.min(x.configuredFactor, x.nodes.length - 1));
  const by = new Map<number, NodeSizes>();
  const of = (node: number): NodeSizes => {
    let n = by.get(node);
    if (n === undefined) {
      n = { node, segments: 0, bytes: 0, events: 0, targetBytes: 0, inboundBytes: 0, outboundBytes: 0, solitaryBytes: 0, heldTooFewWithout: 0, onlyHostOf: [], canBeSafelyUnregistered: false };
      by.set(node, n);
    }
    return n;
  };
  for (const id of x.nodes) of(id);
  for (const { entry, desired } of x.segments) {
    const s = entry.segment;
    const holders = holdersOf(entry);
    const up = holders.filter((h) => x.live.has(h));
    add(up.length === 0 ? cluster.live.missing : up.length < x.factor ? cluster.live.under : holders.length > x.factor ? cluster.live.over : cluster.live.properly, s.bytes);
    add(desired.length === 0 ? cluster.target.missing : desired.length < x.factor ? cluster.target.under : desired.length > x.factor ? cluster.target.over : cluster.target.properly, s.bytes);
    for (const h of holders) {
      const n = of(h);
      n.segments++;
      n.bytes += s.bytes;
      n.events += s.events;
      if (!desired.includes(h)) n.outboundBytes += s.bytes;
      if (holders.length === 1) n.solitaryBytes += s.bytes;
      if (up.filter((o) => o !== h).length < without) n.heldTooFewWithout++;
    }
    for (const d of desired) {
      const n = of(d);
      n.targetBytes += s.bytes;
      if (!holders.includes(d)) n.inboundBytes += s.bytes;
    }
  }
  x.partitions.forEach((hosts, p) => {
    if (hosts.length === 1) of(hosts[0]!).onlyHostOf.push(p);
  });
  const registered = new Set(x.nodes);
  for (const n of by.values()) n.canBeSafelyUnregistered = registered.has(n.node) && n.heldTooFewWithout === 0 && n.onlyHostOf.length === 0;
  return { cluster, nodes: [...by.values()].sort((a, b) => a.node - b.node) };
}
