/**
 * The form a query task's units cross to a query thread in (issue 19): every segment unit's block
 * refs packed into one Float64Array for the task (query/packed-refs.ts, REF_ELEMENTS numbers a
 * block), transferred, not cloned, and the units themselves as columns (paths, tags sent once
 * each, numbers). A structured clone of ~1,600 ref objects (3 M access-log events, a rare token's
 * first-round task) was a walk of every property on the coordinator, then again to rebuild them on
 * the thread; of ~100 unit objects still ~0.2 ms. A segment's shared ref list is packed once and
 * kept (packed-refs.ts), so a query copies runs of it; the first round reads the packed refs as
 * they came (scan.ts pruneScanPacked) and makes objects only for the blocks its filters let
 * through. What crosses back is unchanged.
 */
import type { ScanTask, ScanUnit } from '../query/scan.js';
import { keptPacking, packedRun, packedSegUnit, packRefs, REF_ELEMENTS, SEG_NUMS, unpackRefs, type PackedTask } from '../query/packed-refs.js';

export type WireTask<T extends ScanTask> = PackedTask<T>;

/** A tags object's key (equal tags, one entry of a task's `tags`); a segment's tags object lives as long as the segment. */
const tagsKeys = new WeakMap<Record<string, string>, string>();
function tagsKey(tags: Record<string, string>): string {
  let k = tagsKeys.get(tags);
  if (k === undefined) tagsKeys.set(tags, (k = JSON.stringify(tags)));
  return k;
}

/** `task` with its segment units packed (transfer `refs.buffer`), to post to a query thread. */
export function toWire<T extends ScanTask>(task: T): WireTask<T> {
  let n = 0;
  let s = 0;
  for (const u of task.units) {
    if (u.kind !== 'seg') continue;
    n += u.blocks.length;
    s++;
  }
  const refs = new Float64Array(n * REF_ELEMENTS);
  const paths: string[] = new Array(s);
  const tags: Record<string, string>[] = [];
  const tagsAt = new Map<string, number>();
  const nums = new Int32Array(s * SEG_NUMS);
  const units: PackedTask<ScanTask>['units'] = new Array(task.units.length);
  let at = 0;
  let j = 0;
  for (let i = 0; i < task.units.length; i++) {
    const u = task.units[i]!;
    if (u.kind !== 'seg') {
      units[i] = u;
      continue;
    }
    const { blocks } = u;
    const kept = keptPacking(blocks);
    if (kept === null) packRefs(blocks, refs, at);
    else refs.set(kept.refs.subarray(kept.from * REF_ELEMENTS, (kept.from + blocks.length) * REF_ELEMENTS), at * REF_ELEMENTS);
    const key = tagsKey(u.tags);
    let t = tagsAt.get(key);
    if (t === undefined) {
      tagsAt.set(key, (t = tags.length));
      tags.push(u.tags);
    }
    paths[j] = u.path;
    const k = j * SEG_NUMS;
    nums[k] = u.partition;
    nums[k + 1] = t;
    nums[k + 2] = at;
    nums[k + 3] = blocks.length;
    units[i] = j++;
    at += blocks.length;
  }
  return { ...task, units, refs, segs: { paths, tags, nums } };
}

/** The task `toWire` made, as it was (on the query thread). */
export function fromWire<T extends ScanTask>(task: WireTask<T>): T {
  const { refs, segs, ...rest } = task;
  const units = task.units.map((u): ScanUnit => {
    if (typeof u !== 'number') return u;
    const { at, count } = packedRun(segs, u);
    return packedSegUnit(segs, u, unpackRefs(refs, at, count));
  });
  return { ...rest, units } as unknown as T;
}
