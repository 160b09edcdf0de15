/**
 * Query memory budgets (docs/query-limits.md). Every running query has a budget
 * (`query.max_query_memory_bytes`) and all running queries of the node share a total
 * (`query.max_total_query_memory_bytes`). Both are counters in shared memory, so the worker threads
 * scanning for a query and the coordinator merging its partial results charge the same two numbers.
 *
 * What is charged is an estimate of what the query makes and holds, charged where it is made:
 * values a stage sets on an event (replace, format, concat, eval, parseJson ...) while that event
 * is processed; rows kept by head/tail/sort/table; groups of groupBy/top/timechart with their keys;
 * values kept by collect(); and on the coordinator whatever a merge adopts from a partial result.
 * A charge past either bound ends the query with E_QUERY_MEMORY (its own budget, 400) or
 * E_QUERY_MEMORY_BUSY (the node's total, 429: other queries hold the memory; retry later).
 *
 * Charges are counted locally and written to the shared counters in steps of FLUSH_BYTES, so the
 * hot path is an addition; a context may run up to FLUSH_BYTES past a bound before it is stopped.
 */
import { LogsvcError } from '../lib/errors.js';

/** Shared counters of one query and of the node (BigInt64Array cell 0 of each), and their bounds. */
export interface MemoryBudget {
  query: SharedArrayBuffer;
  node: SharedArrayBuffer;
  queryLimit: number;
  nodeLimit: number;
}

/** Charges are written to the shared counters in steps of this many bytes. */
export const FLUSH_BYTES = 64 * 1024;

/** Estimated bytes of a string held by a query (V8 strings are 1 or 2 bytes per unit, plus a header). */
export function stringBytes(s: string): number {
  return 2 * s.length + 24;
}

/** Estimated bytes of a list of [name, value] pairs kept in a state. */
export function pairsBytes(pairs: readonly (readonly [string, string])[]): number {
  let n = 32;
  for (const [k, v] of pairs) n += 48 + stringBytes(k) + stringBytes(v);
  return n;
}

/**
 * Estimated bytes of a structured-cloneable value (a partial state a merge adopts), walked with an
 * explicit stack and cut short once past `cap`.
 */
export function approxBytes(value: unknown, cap = Number.MAX_SAFE_INTEGER): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= cap) {
    const v = stack.pop();
    if (typeof v === 'string') total += stringBytes(v);
    else if (typeof v !== 'object' || v === null) total += 16;
    else if (v instanceof Map) {
      total += 64 + 32 * v.size;
      for (const [k, x] of v) stack.push(k, x);
    } else if (v instanceof Set) {
      total += 64 + 24 * v.size;
      for (const x of v) stack.push(x);
    } else if (ArrayBuffer.isView(v)) total += v.byteLength + 64;
    else if (Array.isArray(v)) {
      total += 32 + 8 * v.length;
      for (const x of v) stack.push(x);
    } else {
      const o = v as Record<string, unknown>;
      total += 48;
      for (const k in o) {
        total += 16;
        stack.push(o[k]);
      }
    }
  }
  return total;
}

function mib(n: number): string {
  return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
}

/** One context's charges (a worker task, or a query's coordinator) against a budget. */
export class Meter {
  /** Bytes this context holds charged (written to the counters or still pending). */
  private held = 0;
  private pending = 0;
  /** Bytes of values set on the event now being processed; released when it is done. */
  private transient = 0;
  private readonly q: BigInt64Array | null;
  private readonly n: BigInt64Array | null;

  constructor(private readonly budget: MemoryBudget | null) {
    this.q = budget === null ? null : new BigInt64Array(budget.query);
    this.n = budget === null ? null : new BigInt64Array(budget.node);
  }

  charge(bytes: number): void {
    this.held += bytes;
    this.pending += bytes;
    if (this.pending >= FLUSH_BYTES) this.flush(true);
  }

  release(bytes: number): void {
    this.held -= bytes;
    this.pending -= bytes;
    if (this.pending <= -FLUSH_BYTES) this.flush(false);
  }

  /** A value set on the event being processed. */
  made(bytes: number): void {
    this.transient += bytes;
    this.charge(bytes);
  }

  /** The event being processed is done: its values are garbage or charged by whoever kept them. */
  eventDone(): void {
    if (this.transient === 0) return;
    this.release(this.transient);
    this.transient = 0;
  }

  private flush(check: boolean): void {
    if (this.q === null || this.n === null || this.budget === null) {
      this.pending = 0;
      return;
    }
    const d = BigInt(this.pending);
    this.pending = 0;
    const q = Number(Atomics.add(this.q, 0, d) + d);
    const n = Number(Atomics.add(this.n, 0, d) + d);
    if (!check) return;
    if (q > this.budget.queryLimit) {
      throw new LogsvcError(
        'E_QUERY_MEMORY',
        `the query needs more than its memory budget of ${mib(this.budget.queryLimit)} (query.max_query_memory_bytes) for the values, rows and groups it makes; narrow the search, keep fewer rows or groups, or make smaller values`,
      );
    }
    if (n > this.budget.nodeLimit) {
      throw new LogsvcError(
        'E_QUERY_MEMORY_BUSY',
        `the queries running on this node hold more than their total memory budget of ${mib(this.budget.nodeLimit)} (query.max_total_query_memory_bytes); retry when fewer queries run`,
      );
    }
  }

  /** Gives back everything this context holds (the end of a task or of a query). */
  releaseAll(): void {
    this.transient = 0;
    this.pending -= this.held;
    this.held = 0;
    this.flush(false);
  }

  get bytes(): number {
    return this.held;
  }
}

let active: Meter | null = null;

/** The meter of the code running now on this thread (null outside a query). */
export function activeMeter(): Meter | null {
  return active;
}

/** Runs `fn` with `meter` charged for what it makes (synchronous code only). */
export function withMeter<T>(meter: Meter, fn: () => T): T {
  const prev = active;
  active = meter;
  try {
    return fn();
  } finally {
    active = prev;
  }
}

/** Charges the running query for `bytes` it keeps (no-op outside a query). */
export function chargeKept(bytes: number): void {
  if (active !== null) active.charge(bytes);
}

export function releaseKept(bytes: number): void {
  if (active !== null) active.release(bytes);
}

/** A value of `chars` characters set on an event (no-op outside a query). */
export function chargeMade(chars: number): void {
  if (active !== null) active.made(2 * chars + 24);
}

/** Shared counters for a new query against the node's counter. */
export class NodeQueryMemory {
  private readonly node = new SharedArrayBuffer(8);

  constructor(
    readonly perQueryBytes: number,
    readonly totalBytes: number,
  ) {}

  budget(): MemoryBudget {
    return { query: new SharedArrayBuffer(8), node: this.node, queryLimit: this.perQueryBytes, nodeLimit: this.totalBytes };
  }

  /** Bytes charged by all running queries now. */
  get used(): number {
    return Number(Atomics.load(new BigInt64Array(this.node), 0));
  }
}
