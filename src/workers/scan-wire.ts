/**
 * The form a query task's block list crosses to a query thread in (issue 19): each segment unit's
 * block refs as one Float64Array, ELEMENTS numbers a block, instead of an object per block. A
 * structured clone of a typed array is one copy; of ~1,600 ref objects (3 M access-log events, a
 * rare token's first-round task) it was a walk of every property on the coordinator, then again
 * to rebuild them on the thread (0.1-0.35 ms per 200-330 blocks posted, measured on the node;
 * docs/benchmarks.md, 2026-11-29). What crosses back is unchanged.
 */
import type { BlockRef, ScanTask, ScanUnit } from '../query/scan.js';

type SegUnit = Extract<ScanUnit, { kind: 'seg' }>;

/** A segment unit as it crosses: its blocks packed (`refs`). */
export type WireUnit = Exclude<ScanUnit, SegUnit> | (Omit<SegUnit, 'blocks'> & { refs: Float64Array });

export type WireTask<T extends ScanTask> = Omit<T, 'units'> & { units: WireUnit[] };

/** Numbers per block: pos, headerLength, bloomLength, gramLength, flags, compressedLength, uncompressedLength, eventCount, minTs, maxTs, below (NaN: none). */
const ELEMENTS = 11;
const FIELD_GRAMS = 1;
const FRAMED = 2;

function pack(blocks: readonly BlockRef[]): Float64Array {
  const out = new Float64Array(blocks.length * ELEMENTS);
  let k = 0;
  for (const b of blocks) {
    out[k] = b.pos;
    out[k + 1] = b.headerLength;
    out[k + 2] = b.bloomLength;
    out[k + 3] = b.gramLength;
    out[k + 4] = (b.fieldGrams === true ? FIELD_GRAMS : 0) | (b.framed === true ? FRAMED : 0);
    out[k + 5] = b.compressedLength;
    out[k + 6] = b.uncompressedLength;
    out[k + 7] = b.eventCount;
    out[k + 8] = b.minTs;
    out[k + 9] = b.maxTs;
    out[k + 10] = b.below ?? Number.NaN;
    k += ELEMENTS;
  }
  return out;
}

/** The block refs `pack` packed, as the catalog's refs read (scan.ts blockRef): `framed` and `below` only where set. */
function unpack(refs: Float64Array): BlockRef[] {
  const out: BlockRef[] = new Array(refs.length / ELEMENTS);
  for (let i = 0, k = 0; i < out.length; i++, k += ELEMENTS) {
    const flags = refs[k + 4]!;
    const below = refs[k + 10]!;
    const b: BlockRef = {
      pos: refs[k]!,
      headerLength: refs[k + 1]!,
      bloomLength: refs[k + 2]!,
      gramLength: refs[k + 3]!,
      fieldGrams: (flags & FIELD_GRAMS) !== 0,
      compressedLength: refs[k + 5]!,
      uncompressedLength: refs[k + 6]!,
      eventCount: refs[k + 7]!,
      minTs: refs[k + 8]!,
      maxTs: refs[k + 9]!,
    };
    if ((flags & FRAMED) !== 0) b.framed = true;
    if (!Number.isNaN(below)) b.below = below;
    out[i] = b;
  }
  return out;
}

/** `task` with its segment units' blocks packed, to post to a query thread. */
export function toWire<T extends ScanTask>(task: T): WireTask<T> {
  const units = task.units.map((u): WireUnit => {
    if (u.kind !== 'seg') return u;
    const { blocks, ...rest } = u;
    return { ...rest, refs: pack(blocks) };
  });
  return { ...task, units };
}

/** The task `toWire` made, as it was (on the query thread). */
export function fromWire<T extends ScanTask>(task: WireTask<T>): T {
  const units = task.units.map((u): ScanUnit => {
    if (u.kind !== 'seg') return u;
    const { refs, ...rest } = u;
    return { ...rest, blocks: unpack(refs) };
  });
  return { ...task, units } as unknown as T;
}
