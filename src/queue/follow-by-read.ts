/**
 * A live follow built from `read()` and a "partition grew" signal: reads from the follow's position
 * to the end, awaiting the handler for each record, then waits for the signal (or a short timer,
 * as a safety net) and reads on. Used by the embedded queue, where every append is this node's own.
 */
import { LogsvcError } from '../lib/errors.js';
import type { FollowHandle, QueueRecord } from './digest-queue.js';

export interface FollowSource {
  read(partition: number, fromOffset: number): AsyncIterable<QueueRecord>;
  endOffset(partition: number): number;
}

/** Wakers per partition: the queue calls `notify(p)` when records of p became durable. */
export class FollowSignals {
  private readonly waiters = new Map<number, Set<() => void>>();
  private readonly active = new Set<number>();
  /** Notifications so far, per partition: a follow that saw the count change reads again at once. */
  private readonly versions = new Map<number, number>();

  notify(partition: number): void {
    this.versions.set(partition, (this.versions.get(partition) ?? 0) + 1);
    const w = this.waiters.get(partition);
    if (w === undefined) return;
    this.waiters.delete(partition);
    for (const wake of w) wake();
  }

  wait(partition: number, ms: number): { promise: Promise<void>; cancel: () => void } {
    let cancel = (): void => undefined;
    const promise = new Promise<void>((resolve) => {
      const set = this.waiters.get(partition) ?? new Set();
      this.waiters.set(partition, set);
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      }
      set.add(done);
      cancel = done;
    });
    return { promise, cancel };
  }

  follow(source: FollowSource, partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError: (err: Error) => void): FollowHandle {
    if (this.active.has(partition)) throw new LogsvcError('E_INTERNAL', `digest queue partition ${partition} is already followed`);
    this.active.add(partition);
    let stopping = false;
    let cancelWait = (): void => undefined;
    const run = async (): Promise<void> => {
      let next = fromOffset;
      while (!stopping) {
        // endOffset counts appends still being made durable, which read() does not return yet:
        // when a read brings nothing new, wait for the next "durable" signal instead of spinning.
        const version = this.versions.get(partition) ?? 0;
        if (next < source.endOffset(partition)) {
          const before = next;
          for await (const r of source.read(partition, next)) {
            if (stopping) return;
            await handler(r);
            next = r.nextOffset;
          }
          if (next !== before) continue;
        }
        if ((this.versions.get(partition) ?? 0) !== version) continue;
        const w = this.wait(partition, 500);
        cancelWait = w.cancel;
        await w.promise;
      }
    };
    const done = run()
      .catch((err: unknown) => {
        if (!stopping) onError(err as Error);
      })
      .finally(() => this.active.delete(partition));
    return {
      stop: async () => {
        stopping = true;
        cancelWait();
        await done;
      },
    };
  }
}
