/**
 * Reusable SharedArrayBuffer slabs for the large, short-lived buffers that cross threads on every
 * request: ingest bodies on their way to a parsing worker, and block parts on their way to a block
 * worker.
 *
 * Why: V8 counts every new ArrayBuffer as external memory and answers its growth with full
 * garbage collections. At full ingest load the HTTP thread allocated about 3.5 body sizes of
 * ArrayBuffers per request and ran a Mark-Compact every ~100 ms (up to ~16 ms of pause each, and
 * a quarter of a core of GC helper threads). A slab taken from this pool is allocated once and
 * reused; a SharedArrayBuffer view also crosses to a worker without a copy or a transfer.
 *
 * The owner of a view must `release` it once no thread reads it any more (for a task: after the
 * task settled); a view that is never released is simply garbage collected. Slabs come in
 * power-of-two classes from `minBytes` to `maxBytes`; at most `maxRetainedBytes` of free slabs are
 * kept.
 */
import { LogsvcError } from './errors.js';

export interface SlabPoolOptions {
  minBytes?: number;
  maxBytes?: number;
  maxRetainedBytes?: number;
}

export class SlabPool {
  private readonly minBytes: number;
  private readonly maxBytes: number;
  private readonly maxRetainedBytes: number;
  /** Free slabs by class size. */
  private readonly free = new Map<number, SharedArrayBuffer[]>();
  /** The same slabs as a set: a second release of one would hand it to two owners. */
  private readonly freeSet = new Set<SharedArrayBuffer>();
  /** Slabs this pool made; nothing else is ever taken in. */
  private readonly own = new WeakSet<SharedArrayBuffer>();
  private retained = 0;

  constructor(o: SlabPoolOptions = {}) {
    this.minBytes = o.minBytes ?? 64 * 1024;
    this.maxBytes = o.maxBytes ?? 4 * 1024 * 1024;
    this.maxRetainedBytes = o.maxRetainedBytes ?? 32 * 1024 * 1024;
  }

  /** A view of `size` bytes over a pooled slab (contents undefined), or null when `size` is outside the pooled range. */
  acquire(size: number): Buffer | null {
    if (!Number.isSafeInteger(size) || size < this.minBytes || size > this.maxBytes) return null;
    let cls = this.minBytes;
    while (cls < size) cls *= 2;
    const slab = this.free.get(cls)?.pop();
    if (slab !== undefined) {
      this.freeSet.delete(slab);
      this.retained -= cls;
      return Buffer.from(slab, 0, size);
    }
    const made = new SharedArrayBuffer(cls);
    this.own.add(made);
    return Buffer.from(made, 0, size);
  }

  /** Returns the slab under `view` for reuse; views of anything else are left to the garbage collector. */
  release(view: Uint8Array): void {
    const slab = view.buffer;
    if (!(slab instanceof SharedArrayBuffer) || !this.own.has(slab)) return;
    if (this.freeSet.has(slab)) throw new LogsvcError('E_INTERNAL', 'a pooled slab was released twice');
    if (this.retained + slab.byteLength > this.maxRetainedBytes) return;
    let list = this.free.get(slab.byteLength);
    if (list === undefined) this.free.set(slab.byteLength, (list = []));
    list.push(slab);
    this.freeSet.add(slab);
    this.retained += slab.byteLength;
  }

  /** Bytes of free slabs kept for reuse. */
  retainedBytes(): number {
    return this.retained;
  }
}

/** True if `b` lies in shared memory: it crosses to a worker as is (never in a transfer list). */
export function isShared(b: Uint8Array): boolean {
  return b.buffer instanceof SharedArrayBuffer;
}
