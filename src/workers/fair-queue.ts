/**
 * The foreground pool's task queue (issue 24, defect 10): query scans and everything else (ingest
 * parsing, lookup-file packing) wait in two lines, queries first but at most QUERY_BURST in a row,
 * so a query's tasks do not wait behind the whole ingest backlog at full load (with one FIFO line
 * small queries took 22-47 s at p99 under 200 connections of mixed load), nor ingest forever behind
 * a large query's tasks.
 */
import { FixedQueue, type PiscinaTask, type TaskQueue } from 'piscina';

/** Query tasks served in a row before one other task waiting gets its turn. */
const QUERY_BURST = 2;

export class FairTaskQueue implements TaskQueue {
  private readonly queries = new FixedQueue();
  private readonly others = new FixedQueue();
  /** Query tasks served in a row since the last other task. */
  private queryRun = 0;

  get size(): number {
    return this.queries.size + this.others.size;
  }

  private line(task: PiscinaTask): FixedQueue {
    return task.name === 'query' ? this.queries : this.others;
  }

  push(task: PiscinaTask): void {
    this.line(task).push(task);
  }

  /**
   * Query tasks first (a request waits on each, and ingest has its own backpressure), but never more
   * than QUERY_BURST in a row while other work waits, so neither line starves.
   */
  shift(): PiscinaTask | null {
    const queryFirst = this.queryRun < QUERY_BURST;
    const [first, second] = queryFirst ? [this.queries, this.others] : [this.others, this.queries];
    const task = (first.shift() ?? second.shift()) as PiscinaTask | null;
    if (task !== null) this.queryRun = task.name === 'query' ? this.queryRun + 1 : 0;
    return task;
  }

  remove(task: PiscinaTask): void {
    this.line(task).remove(task);
  }
}
