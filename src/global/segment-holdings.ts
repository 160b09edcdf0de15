/**
 * Which nodes hold which segment files, in global state (segment replication, docs/replication.md).
 * A segment is registered by its writer when it is closed (`SegmentStored` with its description);
 * each replica adds itself the same way once its copy is written, fsynced and verified. A holder
 * that loses its copy (a checksum failure, a deletion) says so with `SegmentDropped`.
 *
 * Every holder is stamped with the global sequence number at which it was added (and dropped), so
 * a question about holders can be asked *as of* a sequence number and gets the same answer on every
 * node that has applied at least that far: a distributed query fixes one sequence number and every
 * node picks the segments it scans by it (src/cluster/placement.ts), so each segment is read once.
 */

/** What global state knows of a segment file (from its writer). */
export interface StoredSegment {
  id: string;
  repo: string;
  ds: string;
  partition: number;
  /** The digest epoch it was written in, and by whom. */
  epoch: number;
  writer: number;
  /** Path relative to the segments directory. */
  file: string;
  bytes: number;
  /**
   * Bytes of its blocks before compression (what ingest-size retention counts); absent in listings
   * made before it was recorded.
   */
  uncompressed?: number;
  /** CRC-32C of the whole file. */
  crc: number;
  events: number;
  minTs: number;
  maxTs: number;
  /** Queue position of its first and last event. */
  firstOffset: number;
  firstIndex: number;
  lastOffset: number;
  lastIndex: number;
  /** A rewrite (redaction): the segment it replaces, which is read no more once this has a live holder. */
  replaces?: string;
}

export type SegmentEvent =
  | { type: 'SegmentStored'; node: number; segment: StoredSegment }
  | { type: 'SegmentDropped'; node: number; id: string; reason: string };

export interface HolderSpan {
  /** Sequence number of the event that added this holder. */
  since: number;
  /** Sequence number of the event that dropped it, null while it holds the segment. */
  until: number | null;
}

export interface SegmentEntry {
  segment: StoredSegment;
  holders: Map<number, HolderSpan>;
}

export interface SegmentHoldingsSnapshot {
  segments: { segment: StoredSegment; holders: [number, number, number | null][] }[];
}

export class SegmentHoldings {
  readonly segments = new Map<string, SegmentEntry>();
  /** repository id -> its segment ids (for queries). */
  private readonly byRepo = new Map<string, Set<string>>();
  /** segment id -> the ids of segments listed as its rewrites. */
  readonly replacedBy = new Map<string, Set<string>>();

  apply(e: SegmentEvent, seq: number): void {
    if (e.type === 'SegmentStored') {
      let entry = this.segments.get(e.segment.id);
      if (entry === undefined) {
        entry = { segment: e.segment, holders: new Map() };
        this.segments.set(e.segment.id, entry);
        let ids = this.byRepo.get(e.segment.repo);
        if (ids === undefined) this.byRepo.set(e.segment.repo, (ids = new Set()));
        ids.add(e.segment.id);
        if (e.segment.replaces !== undefined) {
          let by = this.replacedBy.get(e.segment.replaces);
          if (by === undefined) this.replacedBy.set(e.segment.replaces, (by = new Set()));
          by.add(e.segment.id);
        }
      }
      const h = entry.holders.get(e.node);
      if (h === undefined || h.until !== null) entry.holders.set(e.node, { since: seq, until: null });
      return;
    }
    const entry = this.segments.get(e.id);
    const h = entry?.holders.get(e.node);
    if (entry === undefined || h === undefined || h.until !== null) return;
    h.until = seq;
    if ([...entry.holders.values()].every((x) => x.until !== null)) this.forget(e.id);
  }

  private forget(id: string): void {
    const entry = this.segments.get(id);
    if (entry === undefined) return;
    this.segments.delete(id);
    const ids = this.byRepo.get(entry.segment.repo);
    ids?.delete(id);
    if (ids?.size === 0) this.byRepo.delete(entry.segment.repo);
  }

  /** A node left the cluster: it holds nothing from `seq` on. */
  dropNode(node: number, seq: number): void {
    for (const [id, entry] of [...this.segments]) {
      const h = entry.holders.get(node);
      if (h === undefined || h.until !== null) continue;
      h.until = seq;
      if ([...entry.holders.values()].every((x) => x.until !== null)) this.forget(id);
    }
  }

  /** Nodes holding segment `id` as of sequence number `seq` (all current holders when omitted). */
  holdersAt(id: string, seq?: number): number[] {
    const entry = this.segments.get(id);
    if (entry === undefined) return [];
    return holdersOf(entry, seq);
  }

  /**
   * Whether segment `id` is replaced by a rewrite that some node in `live` holds (as of `seq`; now
   * when omitted), following chains of rewrites.
   */
  superseded(id: string, live: (node: number) => boolean, seq?: number, depth = 0): boolean {
    const by = this.replacedBy.get(id);
    if (by === undefined || depth > 64) return false;
    for (const n of by) {
      const entry = this.segments.get(n);
      if (entry !== undefined && holdersOf(entry, seq).some(live)) return true;
      if (this.superseded(n, live, seq, depth + 1)) return true;
    }
    return false;
  }

  /** Segments of a repository (current entries). */
  ofRepository(repo: string): SegmentEntry[] {
    const ids = this.byRepo.get(repo);
    if (ids === undefined) return [];
    const out: SegmentEntry[] = [];
    for (const id of ids) {
      const e = this.segments.get(id);
      if (e !== undefined) out.push(e);
    }
    return out;
  }

  toSnapshot(): SegmentHoldingsSnapshot {
    return { segments: [...this.segments.values()].map((e) => ({ segment: e.segment, holders: [...e.holders].map(([n, h]) => [n, h.since, h.until]) })) };
  }

  loadSnapshot(s: SegmentHoldingsSnapshot | undefined): void {
    for (const { segment, holders } of s?.segments ?? []) {
      this.apply({ type: 'SegmentStored', node: -1, segment }, 0);
      const entry = this.segments.get(segment.id)!;
      entry.holders.clear();
      for (const [n, since, until] of holders) entry.holders.set(n, { since, until });
    }
  }
}

/** The holders of an entry as of `seq` (every current holder when omitted). */
export function holdersOf(entry: SegmentEntry, seq?: number): number[] {
  const out: number[] = [];
  for (const [n, h] of entry.holders) {
    if (seq === undefined ? h.until === null : h.since <= seq && (h.until === null || h.until > seq)) out.push(n);
  }
  return out.sort((a, b) => a - b);
}
