/**
 * The query pool's task queue (issue 24): the scan tasks of short queries (no more tasks than the
 * pool has threads, task name 'queryShort') and those of long ones wait in two lines, short first
 * but at most SHORT_BURST in a row while long ones wait, so a small query does not wait behind
 * every task of the large ones already queued (shortest job first), nor a large one forever.
 */
import type { FixedQueue, PiscinaTask, TaskQueue } from 'piscina';
import { piscina } from './piscina-lib.js';

/** Short queries' tasks served in a row before one long query's task waiting gets its turn. */
const SHORT_BURST = 4;

/** The task name of a short query's scan (task-worker.ts exports the same function under it). */
export const SHORT_SCAN = 'queryShort';

export class ShortFirstQueue implements TaskQueue {
  private readonly short: FixedQueue = new (piscina().FixedQueue)();
  private readonly long: FixedQueue = new (piscina().FixedQueue)();
  /** Short tasks served in a row since the last long one. */
  private shortRun = 0;

  get size(): number {
    return this.short.size + this.long.size;
  }

  private line(task: PiscinaTask): FixedQueue {
    return task.name === SHORT_SCAN ? this.short : this.long;
  }

  push(task: PiscinaTask): void {
    this.line(task).push(task);
  }

  /** Short tasks first, but never more than SHORT_BURST in a row while long ones wait. */
  shift(): PiscinaTask | null {
    const shortFirst = this.shortRun < SHORT_BURST;
    const [first, second] = shortFirst ? [this.short, this.long] : [this.long, this.short];
    const task = (first.shift() ?? second.shift()) as PiscinaTask | null;
    if (task !== null) this.shortRun = task.name === SHORT_SCAN ? this.shortRun + 1 : 0;
    return task;
  }

  remove(task: PiscinaTask): void {
    this.line(task).remove(task);
  }
}
