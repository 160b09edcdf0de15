/**
 * Pure rules of segment replication (docs/replication.md): which nodes should hold a segment, when
 * it is held by enough of them, and which holder reads it for one query. Every node evaluates them
 * on the same global state (segment-holdings.ts) and so reaches the same answers.
 */
import { holdersOf, type SegmentEntry, type StoredSegment } from '../global/segment-holdings.js';
import type { MarkPosition } from '../global/cluster-state.js';

/** One distributed query's fixed point: every node picks the segments it reads by it. */
export interface Placement {
  /** Global sequence number the choice is made at (every node waits until it applied this far). */
  seq: number;
  /** The node the query came to: it reads every segment it holds itself. */
  coordinator: number;
  /** Nodes the coordinator asks (itself included). */
  live: number[];
  /**
   * A live query's historical part: each partition's digest epoch as of `seq` (0: none). A node
   * reads a partition's memory only from its digester of that epoch and leaves out segments of
   * later epochs (live-boundary.ts).
   */
  epochs?: number[];
}

/** Stable small hash of a segment id: spreads reads over a segment's holders. */
function spread(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The holder that reads segment `id` in a query of `p`: the coordinator if it holds it, else one live holder. */
export function chooseHolder(id: string, holders: readonly number[], p: Placement): number | null {
  const live = holders.filter((h) => p.live.includes(h));
  if (live.length === 0) return null;
  if (live.includes(p.coordinator)) return p.coordinator;
  return live[spread(id) % live.length]!;
}

/**
 * Whether node `self` reads a local segment in a query of `p`. A segment global state does not
 * list yet (as of `p.seq`) is read by the node that wrote it, and only by it (a copy that just
 * arrived elsewhere is not read twice); a listed one by the holder `chooseHolder` picks.
 */
export function readsHere(self: number, meta: { id: string; writer?: number | undefined; replaces?: string | undefined }, entry: SegmentEntry | undefined, p: Placement, listed?: (id: string) => SegmentEntry | undefined): boolean {
  const holders = entry === undefined ? [] : holdersOf(entry, p.seq);
  if (holders.length === 0) {
    // A rewrite made here and not listed yet stands in for the segment it replaces, where this
    // node is the one to read that segment (it no longer has it).
    const old = meta.replaces === undefined ? undefined : listed?.(meta.replaces);
    if (old !== undefined && holdersOf(old, p.seq).length > 0) return chooseHolder(old.segment.id, holdersOf(old, p.seq), p) === self;
    return meta.writer === undefined || meta.writer === self;
  }
  return chooseHolder(meta.id, holders, p) === self;
}

const after = (a: MarkPosition, b: MarkPosition): boolean => a.offset > b.offset || (a.offset === b.offset && a.index > b.index);

/** Whether every block of a segment is void: its epoch ended with marks before its first event. */
export function entirelyVoid(s: StoredSegment, end: ReadonlyMap<string, MarkPosition> | undefined): boolean {
  if (end === undefined) return false;
  const mark = end.get(s.ds);
  return mark === undefined || after({ offset: s.firstOffset, index: s.firstIndex }, mark);
}

/**
 * The nodes that should hold a segment of `partition`: the first `factor` nodes, in the order of the
 * partition's hosts and then every other node by id, that are available (alive, or not dead long
 * enough for their copies to be made again elsewhere). Draining nodes come last.
 */
export function desiredHolders(partitionHosts: readonly number[], nodes: readonly number[], factor: number, available: (node: number) => boolean, draining: ReadonlySet<number> = new Set()): number[] {
  const rest = nodes.filter((n) => !partitionHosts.includes(n)).sort((a, b) => a - b);
  const order = [...partitionHosts, ...rest];
  const pref = [...order.filter((n) => !draining.has(n)), ...order.filter((n) => draining.has(n))];
  const out: number[] = [];
  for (const n of pref) {
    if (out.length >= factor) break;
    if (available(n) && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * Held by enough nodes for the queue's copy of its events to be let go: by `factor` live nodes, or,
 * when fewer nodes than that are alive, by every live node (under-replicated, and reported so). A
 * dead holder does not count: its copy cannot be read until it returns.
 */
export function sufficientlyHeld(holders: readonly number[], factor: number, live: readonly number[]): boolean {
  if (holders.filter((h) => live.includes(h)).length >= factor) return true;
  return live.length < factor && live.length > 0 && live.every((n) => holders.includes(n));
}
