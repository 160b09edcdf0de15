/**
 * Block refs packed as numbers (issue 19, the rare token's first round): REF_ELEMENTS numbers a
 * block in one Float64Array, the form a task's refs cross to a query thread in (workers/scan-wire.ts)
 * and the form the native filter check reads them in (native/block_filters.cc, filter-packs.ts),
 * so a first-round task makes no object for a block its filters rule out. A segment's shared ref
 * list (scan.ts segmentRefs) is packed once, on its first query, and kept with it: a query copies
 * each unit's run of it (one memcpy) instead of packing it block by block (0.5 ms a query for
 * 1,580 blocks before; docs/benchmarks.md, rare21). Contiguous runs of a shared list that
 * executor.ts cutIntoTasks makes are remembered as such (`refsSlice`); any other list is packed
 * when posted, as before.
 */
import type { BlockRef, ScanTask, ScanUnit } from './scan.js';

type SegUnit = Extract<ScanUnit, { kind: 'seg' }>;
type MemUnit = Extract<ScanUnit, { kind: 'mem' }>;

/**
 * A task's segment units as columns (a structured clone of ~100 unit objects cost ~0.2 ms, of
 * these ~0.02; bench note in docs/benchmarks.md, rare21): unit j's path `paths[j]`, and in `nums`
 * (SEG_NUMS a unit) its partition, its tags (an index into `tags`, equal tags sent once), and its
 * blocks as the task's `refs`' blocks `at` to `at + count`.
 */
export interface PackedSegs {
  paths: string[];
  tags: Record<string, string>[];
  nums: Int32Array;
}
export const SEG_NUMS = 4;
/** A task with its segment units packed (workers/scan-wire.ts toWire): a number in `units` is a segment unit's index in `segs`. */
export type PackedTask<T extends ScanTask> = Omit<T, 'units'> & { units: (MemUnit | number)[]; refs: Float64Array; segs: PackedSegs };

/** Segment unit `j` of a packed task: where its blocks are in `refs`. */
export function packedRun(segs: PackedSegs, j: number): { at: number; count: number } {
  return { at: segs.nums[j * SEG_NUMS + 2]!, count: segs.nums[j * SEG_NUMS + 3]! };
}

/** Segment unit `j` of a packed task, with `blocks` (some or all of its own, unpacked). */
export function packedSegUnit(segs: PackedSegs, j: number, blocks: readonly BlockRef[]): SegUnit {
  const k = j * SEG_NUMS;
  return { kind: 'seg', path: segs.paths[j]!, partition: segs.nums[k]!, tags: segs.tags[segs.nums[k + 1]!]!, blocks };
}

/**
 * Numbers per block, in this order (native/block_filters.cc reads the first six): pos,
 * headerLength, bloomLength, gramLength, flags (REF_FIELD_GRAMS | REF_FRAMED), compressedLength,
 * uncompressedLength, eventCount, minTs, maxTs, below (NaN: none).
 */
export const REF_ELEMENTS = 11;
export const REF_FIELD_GRAMS = 1;
export const REF_FRAMED = 2;
/** Index of uncompressedLength in a block's numbers. */
export const REF_UNCOMPRESSED = 6;

/** Writes `blocks` packed into `out` from block `at` on. */
export function packRefs(blocks: readonly BlockRef[], out: Float64Array, at: number): void {
  let k = at * REF_ELEMENTS;
  for (const b of blocks) {
    out[k] = b.pos;
    out[k + 1] = b.headerLength;
    out[k + 2] = b.bloomLength;
    out[k + 3] = b.gramLength;
    out[k + 4] = (b.fieldGrams === true ? REF_FIELD_GRAMS : 0) | (b.framed === true ? REF_FRAMED : 0);
    out[k + 5] = b.compressedLength;
    out[k + 6] = b.uncompressedLength;
    out[k + 7] = b.eventCount;
    out[k + 8] = b.minTs;
    out[k + 9] = b.maxTs;
    out[k + 10] = b.below ?? Number.NaN;
    k += REF_ELEMENTS;
  }
}

/** Block `i` of `refs` as the catalog's refs read (scan.ts blockRef): `framed` and `below` only where set. */
export function unpackRef(refs: Float64Array, i: number): BlockRef {
  const k = i * REF_ELEMENTS;
  const flags = refs[k + 4]!;
  const below = refs[k + 10]!;
  const b: BlockRef = {
    pos: refs[k]!,
    headerLength: refs[k + 1]!,
    bloomLength: refs[k + 2]!,
    gramLength: refs[k + 3]!,
    fieldGrams: (flags & REF_FIELD_GRAMS) !== 0,
    compressedLength: refs[k + 5]!,
    uncompressedLength: refs[k + 6]!,
    eventCount: refs[k + 7]!,
    minTs: refs[k + 8]!,
    maxTs: refs[k + 9]!,
  };
  if ((flags & REF_FRAMED) !== 0) b.framed = true;
  if (!Number.isNaN(below)) b.below = below;
  return b;
}

/** Blocks `at` to `at + count` of `refs`, unpacked. */
export function unpackRefs(refs: Float64Array, at: number, count: number): BlockRef[] {
  const out: BlockRef[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = unpackRef(refs, at + i);
  return out;
}

/** Shared ref lists (never changed once made), packed on first use. */
const shared = new WeakMap<readonly BlockRef[], Float64Array | null>();
/** Runs of shared lists: the list and where the run starts in it. */
const runs = new WeakMap<readonly BlockRef[], { list: readonly BlockRef[]; from: number }>();

/** Marks `list` as shared and never changed (scan.ts segmentRefs): its packed form is kept with it. */
export function shareRefs(list: readonly BlockRef[]): void {
  if (!shared.has(list)) shared.set(list, null);
}

/** `list`'s blocks `from` to `to`, remembered as a run of it when `list` is shared (or a run of one). */
export function refsSlice(list: readonly BlockRef[], from: number, to: number): BlockRef[] {
  const piece = list.slice(from, to);
  const run = runs.get(list);
  if (run !== undefined) runs.set(piece, { list: run.list, from: run.from + from });
  else if (shared.has(list)) runs.set(piece, { list, from });
  return piece;
}

/**
 * `blocks` packed as a run of a kept packed list (`refs`, block `from` on), or null when `blocks`
 * is not a shared list or a run of one.
 */
export function keptPacking(blocks: readonly BlockRef[]): { refs: Float64Array; from: number } | null {
  const run = runs.get(blocks);
  const list = run === undefined ? blocks : run.list;
  const had = shared.get(list);
  if (had === undefined) return null;
  let refs = had;
  if (refs === null) {
    refs = new Float64Array(list.length * REF_ELEMENTS);
    packRefs(list, refs, 0);
    shared.set(list, refs);
  }
  return { refs, from: run === undefined ? 0 : run.from };
}
