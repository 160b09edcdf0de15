/**
 * Where a node's queries read events: the segment catalog and the digest's memory. A cluster query
 * reads only what its placement gives this node (cluster/placement.ts): each segment by one holder,
 * each partition's memory from the digester of the placement's epoch.
 */
import { readsHere } from '../cluster/placement.js';
import type { Digest } from '../digest/index.js';
import type { GlobalStore } from '../global/index.js';
import type { EventSources } from '../query/index.js';
import type { SegmentCatalog, SegmentInfo } from '../segments/catalog.js';

export interface SourceDeps {
  selfId: number;
  clustered: boolean;
  catalog: SegmentCatalog;
  store: GlobalStore;
  digest: Digest;
}

export function querySources({ selfId, clustered, catalog, store, digest }: SourceDeps): EventSources {
  return {
    // A cluster query: only the segments this node reads for it (each segment by one holder).
    segments: (repoId, placement) => {
      const all = catalog.forRepository(repoId);
      if (placement === undefined) return all;
      const listed = store.state.cluster.segments.segments;
      const holdings = store.state.cluster.segments;
      const live = (n: number): boolean => placement.live.includes(n);
      // A live query reads each partition as of its placement's epoch (cluster/live-boundary.ts):
      // segments of later epochs are left out, and the blocks of that epoch count as not void yet.
      const epochs = placement.epochs;
      const asOf = (seg: SegmentInfo): number => (seg.meta.epoch === undefined || epochs === undefined ? Number.MAX_SAFE_INTEGER : (epochs[seg.meta.partition] ?? 0));
      const chosen = all.filter((seg) => readsHere(selfId, seg.meta, listed.get(seg.meta.id), placement, (id) => listed.get(id)) && !holdings.superseded(seg.meta.id, live, placement.seq) && (seg.meta.epoch ?? 0) <= asOf(seg));
      // Blocks past the marks their epoch ended with are void (the next owner digests those
      // events again): left out here already, not only once this node's fencing has run.
      return chosen.map((seg) => withoutVoidBlocks(seg, seg.meta.epoch === undefined || seg.meta.epoch >= asOf(seg) ? undefined : store.state.cluster.endOf(seg.meta.partition, seg.meta.epoch)));
    },
    // A deposed owner's digester may hold blocks for a moment after its epoch ended: only the
    // current owner's memory is read (a live query: the digester of the placement's epoch).
    memory: (repoId, placement) => {
      if (!clustered) return digest.memory(repoId);
      const epochs = placement?.epochs;
      if (epochs !== undefined) return digest.memory(repoId).filter((m) => m.epoch !== undefined && m.epoch === epochs[m.partition]);
      return digest.memory(repoId).filter((m) => store.state.cluster.epochs.get(m.partition)?.node === selfId);
    },
    highWater: (partition, ds) => catalog.highWater(partition, ds),
    pin: (paths) => catalog.pin(paths),
  };
}

/** `seg` without the blocks past its datasource's mark in `end` (its epoch's end; undefined: not ended). */
function withoutVoidBlocks(seg: SegmentInfo, end: ReadonlyMap<string, { offset: number; index: number }> | undefined): SegmentInfo {
  if (end === undefined) return seg;
  const mark = end.get(seg.meta.ds);
  const keep = seg.blocks.filter((b) => mark !== undefined && (b.lastOffset < mark.offset || (b.lastOffset === mark.offset && b.lastIndex <= mark.index)));
  return keep.length === seg.blocks.length ? seg : { ...seg, blocks: keep };
}
