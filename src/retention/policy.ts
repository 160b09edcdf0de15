/**
 * Which segments are past retention: a pure function of the segments, the limits and the time.
 * Time: a segment goes when its newest event is older than the limit. Sizes: the oldest segments
 * (by newest event) go first until what remains is within the limit. Open segments count toward
 * the sizes but are never chosen (their writer still appends); they are chosen once closed.
 */
import type { RetentionSettings } from '../global/index.js';

export const DAY_MS = 86_400_000;
export const GB = 1e9;

export interface SegmentStat {
  id: string;
  /** Newest event's timestamp. */
  maxTs: number;
  /** Bytes of the file (stored, compressed). */
  bytes: number;
  /** Bytes of its blocks before compression (the ingest-size measure). */
  uncompressed: number;
  closed: boolean;
}

/** The repository's own limits, each kind falling back to the node's default (null: none). */
export function effectiveRetention(own: RetentionSettings, nodeDefault: RetentionSettings): RetentionSettings {
  return {
    timeDays: own.timeDays ?? nodeDefault.timeDays,
    ingestGb: own.ingestGb ?? nodeDefault.ingestGb,
    storageGb: own.storageGb ?? nodeDefault.storageGb,
  };
}

const oldestFirst = (a: SegmentStat, b: SegmentStat): number => a.maxTs - b.maxTs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Ids of the segments to delete, oldest first. */
export function pastRetention(segments: readonly SegmentStat[], r: RetentionSettings, now: number): string[] {
  const out = new Set<string>();
  if (r.timeDays !== null) {
    const cutoff = now - r.timeDays * DAY_MS;
    for (const s of segments) if (s.closed && s.maxTs < cutoff) out.add(s.id);
  }
  const bySize = (limitGb: number | null, size: (s: SegmentStat) => number): void => {
    if (limitGb === null) return;
    const limit = limitGb * GB;
    let total = 0;
    for (const s of segments) if (!out.has(s.id)) total += size(s);
    for (const s of [...segments].sort(oldestFirst)) {
      if (total <= limit) break;
      if (!s.closed || out.has(s.id)) continue;
      out.add(s.id);
      total -= size(s);
    }
  };
  bySize(r.storageGb, (s) => s.bytes);
  bySize(r.ingestGb, (s) => s.uncompressed);
  return [...out];
}

/** The oldest closed segments (of any repository) whose bytes add up to at least `bytesToFree`. */
export function oldestToFree(segments: readonly SegmentStat[], bytesToFree: number): string[] {
  const out: string[] = [];
  let freed = 0;
  for (const s of [...segments].sort(oldestFirst)) {
    if (freed >= bytesToFree) break;
    if (!s.closed) continue;
    out.push(s.id);
    freed += s.bytes;
  }
  return out;
}

/**
 * The cluster-wide form of the rule: the time bound below which a repository's segments are past
 * retention (a segment goes when its newest event is older than it), or null when none is. Time:
 * now minus the limit. Sizes: just past the newest of the segments pastRetention picks.
 *
 * It is a function of catalog entries, so it holds however the entries are spread over nodes: run
 * on any subset of a repository's segments (one node's catalog, before replication) it gives a bound
 * no higher than the whole catalog's (a part is never further over a size limit than the whole),
 * so the highest bound any node proposes never deletes more than the rule over the whole catalog.
 * Segments whose newest event equals a chosen one's are below the bound too (ties go together).
 */
export function retentionBound(segments: readonly SegmentStat[], r: RetentionSettings, now: number): number | null {
  let bound: number | null = r.timeDays === null ? null : now - r.timeDays * DAY_MS;
  if (r.storageGb !== null || r.ingestGb !== null) {
    const bySize = pastRetention(segments, { timeDays: null, ingestGb: r.ingestGb, storageGb: r.storageGb }, now);
    const byId = new Map(segments.map((s) => [s.id, s]));
    for (const id of bySize) {
      const b = byId.get(id)!.maxTs + 1;
      if (bound === null || b > bound) bound = b;
    }
  }
  return bound;
}
