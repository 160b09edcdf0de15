/**
 * What retention decides over and what the size fields sum: a repository's segments, each counted
 * once. On a single node that is the node's catalog. In a cluster it is the segment listing in
 * global state (SegmentStored: every closed segment with its sizes, whichever nodes hold copies of
 * it), plus this node's segments the listing does not hold yet (open ones, ones not yet
 * registered): the listing is the same on every node, so every node proposes (about) the same
 * retention bound and answers the same sizes, and a segment with three copies counts once.
 */
import type { GlobalState } from '../global/index.js';
import type { StoredSegment } from '../global/segment-holdings.js';
import type { SegmentInfo } from '../segments/catalog.js';
import type { SegmentStat } from './policy.js';

/** A local segment's stat, from its catalog entry. */
export function localStat(s: SegmentInfo): SegmentStat {
  let maxTs = -Infinity;
  let uncompressed = 0;
  for (const b of s.blocks) {
    if (b.maxTs > maxTs) maxTs = b.maxTs;
    uncompressed += b.uncompressedLength;
  }
  return { id: s.meta.id, maxTs, bytes: s.bytes, uncompressed, closed: s.closed };
}

/** A listed segment's stat; a listing without the uncompressed size takes it from a local copy, else counts its file bytes (never more than the truth). */
function listedStat(s: StoredSegment, local: SegmentInfo | undefined): SegmentStat {
  const uncompressed = s.uncompressed ?? (local === undefined ? s.bytes : localStat(local).uncompressed);
  return { id: s.id, maxTs: s.maxTs, bytes: s.bytes, uncompressed, closed: true };
}

/** The segments of every repository that has some here or in the listing, each counted once: repository id -> segment id -> stat. */
export function repositorySegments(state: GlobalState, local: readonly SegmentInfo[], clustered: boolean): Map<string, Map<string, SegmentStat>> {
  const out = new Map<string, Map<string, SegmentStat>>();
  const of = (repo: string): Map<string, SegmentStat> => {
    let m = out.get(repo);
    if (m === undefined) out.set(repo, (m = new Map()));
    return m;
  };
  const localById = new Map(local.map((s) => [s.meta.id, s]));
  if (clustered) {
    const listing = state.cluster.segments;
    for (const entry of listing.segments.values()) {
      // A segment rewritten by a redaction counts as its rewrite, once that is listed.
      if (listing.superseded(entry.segment.id, () => true)) continue;
      of(entry.segment.repo).set(entry.segment.id, listedStat(entry.segment, localById.get(entry.segment.id)));
    }
    for (const s of local) {
      if (listing.superseded(s.meta.id, () => true)) continue;
      const m = of(s.meta.repo);
      if (!m.has(s.meta.id)) m.set(s.meta.id, localStat(s));
    }
    return out;
  }
  for (const s of local) of(s.meta.repo).set(s.meta.id, localStat(s));
  return out;
}

/**
 * A repository's sizes as the API answers them: what the sweep counts, less the segments already
 * decided past retention (below the bound in global state) that holders have not deleted yet. In a
 * cluster only listed segments count, so the answer is the same on every node that has applied
 * global state as far: segments still open count once closed and listed (docs/data-lifecycle.md).
 */
export function repositorySizes(state: GlobalState, local: readonly SegmentInfo[], clustered: boolean, repositoryId: string): { compressed: number; uncompressed: number } {
  let compressed = 0;
  let uncompressed = 0;
  const bound = state.repositories.get(repositoryId)?.retentionBound ?? null;
  const count = (s: SegmentStat): void => {
    if (bound !== null && s.closed && s.maxTs < bound) return;
    compressed += s.bytes;
    uncompressed += s.uncompressed;
  };
  if (clustered) {
    const listing = state.cluster.segments;
    const localById = new Map(local.map((s) => [s.meta.id, s]));
    for (const entry of listing.ofRepository(repositoryId)) {
      if (!listing.superseded(entry.segment.id, () => true)) count(listedStat(entry.segment, localById.get(entry.segment.id)));
    }
  } else {
    for (const s of local) count(localStat(s));
  }
  return { compressed, uncompressed };
}
