/**
 * Who digests which partition now, as a pure function of the layout, the live nodes and the
 * handovers in progress. The rule: a partition's owner is the first live host in its host list;
 * while a handover of the partition is in progress, its current owner (`from`) keeps it until the
 * handover completes, as long as that owner is alive. The digest and query sides only ask this.
 */

/**
 * A controlled handover of one partition from its current owner to the node that should own it.
 * `completed` ends it (ownership follows the plain rule again); every other phase means in progress.
 */
export type HandoverPhase = 'requested' | 'flushing' | 'flushed' | 'completed';

export interface Handover {
  partition: number;
  from: number;
  to: number;
  phase: HandoverPhase;
}

/** The first live host of `hosts`, or null when none is alive. */
export function firstLiveHost(hosts: readonly number[], live: ReadonlySet<number>): number | null {
  for (const h of hosts) if (live.has(h)) return h;
  return null;
}

/**
 * The owner of every partition (index = partition), or null where no host is alive. A handover in
 * progress keeps the partition with `from` while `from` is alive, even when a layout change no longer
 * lists it (a layout change moves ownership by the same handover); once `from` is dead the plain
 * rule applies, so a dead owner never holds a partition.
 * Handovers of partitions outside the layout are ignored; of several for one partition, the last wins.
 */
export function owners(layout: readonly (readonly number[])[], live: ReadonlySet<number>, handovers: readonly Handover[] = []): (number | null)[] {
  const holding = new Map<number, number>();
  for (const h of handovers) {
    if (h.phase === 'completed') holding.delete(h.partition);
    else holding.set(h.partition, h.from);
  }
  return layout.map((hosts, p) => {
    const keeper = holding.get(p);
    if (keeper !== undefined && live.has(keeper)) return keeper;
    return firstLiveHost(hosts, live);
  });
}

/** Partitions owned by `nodeId`, ascending. */
export function ownedBy(ownerByPartition: readonly (number | null)[], nodeId: number): number[] {
  const out: number[] = [];
  ownerByPartition.forEach((o, p) => {
    if (o === nodeId) out.push(p);
  });
  return out;
}

/**
 * The handovers the plain rule asks for: partitions whose current owner (as the cluster reports it,
 * e.g. from heartbeat payloads) is alive but is not the first live host. A partition with no current
 * owner, or whose owner died, needs no handover: the first live host simply takes it (failover).
 */
export function handoversNeeded(layout: readonly (readonly number[])[], live: ReadonlySet<number>, current: readonly (number | null)[]): Handover[] {
  const out: Handover[] = [];
  layout.forEach((hosts, p) => {
    const from = current[p];
    const to = firstLiveHost(hosts, live);
    if (from === undefined || from === null || to === null || from === to || !live.has(from)) return;
    out.push({ partition: p, from, to, phase: 'requested' });
  });
  return out;
}
