/**
 * The worker pools, piscina's one home. Two pools, by what their work is waiting on:
 *
 * - **foreground**: work a request is waiting on (parsing large ingest bodies and running custom
 *   parsers, query scans, packing uploaded lookup files), at normal priority;
 * - **background**: building blocks for the digest (decode, columns, skip index, LZ4), at a lower
 *   CPU priority (`niceIncrement`), so that it takes the cores the requests leave.
 *
 * One shared pool made an ingest acknowledgement wait behind a block build (tens of ms) or parse on
 * the HTTP thread: the ack p99 at half load was 32–50 ms. With its own threads a parse starts at
 * once, and the lower priority hands the cores to it within a scheduler tick.
 * Ingest bodies in shared memory (the HTTP server reads them into pooled slabs) are shared with the
 * worker, others transferred; block parts are copied into one pooled shared slab (query snapshots
 * share the parts themselves), so that no ArrayBuffer is allocated on the HTTP thread per task
 * (src/lib/slab-pool.ts says why that matters).
 *
 * Both pools run with piscina's `atomics: 'async'`: each worker goes back to its event loop between
 * tasks. In the default 'sync' mode a busy worker takes task after task without ever doing so, and
 * the finalizers that free the buffers lz4-napi returns (Rust-allocated, released by a callback
 * the event loop runs) never ran: at full load the process grew by ~20 MB/s, past 1.5 GB in a
 * minute (kv dataset), and the growing heap cost ~15 % of the throughput too.
 *
 * Each pool (and piscina itself, piscina-lib.ts) is made at its first task: an idle node holds
 * neither, and the inline block encoder (INLINE_BLOCK_BYTES) runs without one.
 */
import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import { piscina } from './piscina-lib.js';
import { LogsvcError } from '../lib/errors.js';
import { SHORT_SCAN, ShortFirstQueue } from './query-queue.js';
import { toWire } from './scan-wire.js';
import { ownsBuffer } from '../lib/bytes.js';
import { isShared, SlabPool } from '../lib/slab-pool.js';
import { buildBlock, type BlockPart } from '../digest/block-parts.js';
import { toEncoded, type BlockEncoder, type EncodedBlock } from '../digest/block-encoder.js';
import type { IngestTask, IngestTaskResult } from '../ingest/pipeline.js';
import type { PruneScan, PruneTask, ScanResult, ScanTask } from '../query/scan.js';
import type { FileKind, PackedTable, TablePacker } from '../files/index.js';
import { unwrapPackResult, type PackSource, type PackTask, type PackTaskResult } from '../files/pack-task.js';

export interface WorkerPoolOptions {
  /** Threads of each pool; one per core by default. */
  threads?: number;
  /** Added to the background threads' nice value (0 = same priority as requests). */
  backgroundNice?: number;
  /**
   * The query memory budgets (query.max_query_memory_bytes and max_total_query_memory_bytes): they
   * set the old-generation heap limit of each query-scan thread (queryHeapLimitMb). A scan past it
   * ends that thread alone, and the query with E_QUERY_MEMORY. None: no limit (tests).
   */
  queryMemory?: { perQueryBytes: number; totalBytes: number };
  /**
   * A block of at most this many record bytes is built on the calling thread while the background
   * pool runs no thread (default INLINE_BLOCK_BYTES; 0: always on the pool).
   */
  inlineBlockBytes?: number;
}

/**
 * A trickle of events (the node's own log lines, a quiet source) makes blocks of a few KB every
 * digest.flush_block_seconds. Starting a background thread for one costs tens of ms of CPU and
 * ~20 MB of memory for the thread's 30 s idle life, where building it here takes well under a
 * millisecond; so a small block is built inline unless a background thread is already running
 * (then it goes to the pool as before, and blocks of a loaded node always do).
 */
export const INLINE_BLOCK_BYTES = 32 * 1024;

/** MiB of heap a query-scan thread may use beyond what one query may hold (code, caches, its inputs). */
export const QUERY_HEAP_HEADROOM_MB = 64;

/**
 * The heap limit of each query-scan thread: one query's budget (never more than the node's total
 * shared by the threads) plus headroom, so the threads' heaps together stay near the configured
 * total whatever the budgets' estimates miss (garbage not collected yet, values not charged).
 */
export function queryHeapLimitMb(perQueryBytes: number, totalBytes: number, threads: number): number {
  const share = Math.min(perQueryBytes, Math.floor(totalBytes / Math.max(1, threads)));
  return Math.ceil(share / (1024 * 1024)) + QUERY_HEAP_HEADROOM_MB;
}

/** What a buffer handed to a task crosses with: shared memory as is, anything else moved (it must own its ArrayBuffer). */
function transferListOf(b: Uint8Array): ArrayBuffer[] {
  return isShared(b) ? [] : [b.buffer as ArrayBuffer];
}

export class WorkerPool implements BlockEncoder, TablePacker {
  /** Threads that run query scans (the query executor's parallelism). */
  readonly size: number;
  private foregroundPool: Piscina | null = null;
  private backgroundPool: Piscina | null = null;
  private queryPool: Piscina | null = null;
  private readonly filename: string;
  private readonly backgroundNice: number;
  private readonly queryHeapMb: number | null;
  private readonly partSlabs = new SlabPool();
  private readonly inlineBlockBytes: number;

  constructor(opts: WorkerPoolOptions = {}) {
    const threads = opts.threads ?? Math.max(1, availableParallelism());
    this.size = threads;
    this.inlineBlockBytes = opts.inlineBlockBytes ?? INLINE_BLOCK_BYTES;
    this.filename = new URL('./task-worker.js', import.meta.url).href;
    this.backgroundNice = opts.backgroundNice ?? 0;
    this.queryHeapMb = opts.queryMemory === undefined ? null : queryHeapLimitMb(opts.queryMemory.perQueryBytes, opts.queryMemory.totalBytes, threads);
  }

  private get foreground(): Piscina {
    return (this.foregroundPool ??= new (piscina().Piscina)({ filename: this.filename, minThreads: 0, maxThreads: this.size, idleTimeout: 30_000, atomics: 'async', recordTiming: false }));
  }

  private get queries(): Piscina {
    // Query scans on threads of their own, each with a heap limit: a scan that makes more than the
    // budgets' estimates caught ends its own thread (and its query), not the node; and ingest does
    // not wait in line behind query tasks (the kernel shares the cores between the two pools).
    return (this.queryPool ??= new (piscina().Piscina)({
      filename: this.filename,
      minThreads: 0,
      maxThreads: this.size,
      idleTimeout: 30_000,
      atomics: 'async',
      recordTiming: false,
      taskQueue: new ShortFirstQueue(),
      ...(this.queryHeapMb === null ? {} : { resourceLimits: { maxOldGenerationSizeMb: this.queryHeapMb } }),
    }));
  }

  private get background(): Piscina {
    // piscina applies niceIncrement per thread through its optional @napi-rs/nice (nice(2) is
    // per thread on Linux); where that module cannot load the threads run at normal priority.
    return (this.backgroundPool ??= new (piscina().Piscina)({ filename: this.filename, minThreads: 0, maxThreads: this.size, idleTimeout: 30_000, atomics: 'async', recordTiming: false, niceIncrement: this.backgroundNice }));
  }

  async encode(parts: BlockPart[]): Promise<EncodedBlock> {
    // Copied, not transferred: queries may hold the same parts (a snapshot of the digest's memory)
    // and clone them to their own tasks later. One copy into one buffer: cloning the parts'
    // buffers one by one took 7-12 % of the HTTP thread under load. The buffer is a pooled shared
    // slab when the size allows (shared with the worker, back in the pool once the task settled),
    // else a new buffer that is transferred.
    let total = 0;
    for (const p of parts) total += p.events.byteLength;
    if (total <= this.inlineBlockBytes && (this.backgroundPool?.threads.length ?? 0) === 0) return toEncoded(buildBlock(parts));
    const slab = this.partSlabs.acquire(total);
    const joined = slab ?? new Uint8Array(total);
    let at = 0;
    const moved = parts.map((p) => {
      joined.set(p.events, at);
      const events = joined.subarray(at, (at += p.events.byteLength));
      return { ...p, events };
    });
    try {
      const ab = (await this.background.run(moved, { name: 'block', transferList: transferListOf(joined) })) as ArrayBuffer;
      return toEncoded(Buffer.from(ab));
    } finally {
      if (slab !== null) this.partSlabs.release(slab);
    }
  }

  /** Parses an ingest request (and runs its custom parsers) on a foreground thread. */
  async ingest(task: IngestTask): Promise<IngestTaskResult> {
    if (!isShared(task.body) && !ownsBuffer(task.body)) task = { ...task, body: new Uint8Array(task.body) };
    return (await this.foreground.run(task, { name: 'ingest', transferList: transferListOf(task.body) })) as IngestTaskResult;
  }

  /**
   * Scans blocks for a query (src/query/scan.ts); errors come back as LogsvcError data. A short
   * query's tasks (`short`: no more than the threads) go ahead of long ones' (query-queue.ts).
   */
  async scan(task: ScanTask, short = false): Promise<ScanResult> {
    return this.runQuery<ScanResult>(task, short ? SHORT_SCAN : 'query');
  }

  /** A query's first-round task on a query thread: its blocks pruned by their filters, then scanned or listed (scan.ts pruneScanPacked). */
  async prune(task: PruneTask): Promise<PruneScan> {
    return this.runQuery<PruneScan>(task, 'prune');
  }

  /** A query task on a query thread; its error data, and a thread that ran out of heap, as LogsvcErrors. */
  private async runQuery<T>(task: ScanTask, name: string): Promise<T> {
    let r: T | { error: ReturnType<LogsvcError['toJSON']> };
    try {
      // The packed refs are made for this post alone: moved, not copied.
      const wire = toWire(task);
      r = (await this.queries.run(wire, { name, transferList: [wire.refs.buffer as ArrayBuffer] })) as typeof r;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new LogsvcError(
          'E_QUERY_MEMORY',
          `the query's scan needed more than the ${this.queryHeapMb ?? '?'} MiB heap of a query thread (from query.max_query_memory_bytes); narrow the search, keep fewer rows or groups, or make smaller values`,
        );
      }
      throw err;
    }
    if (r !== null && typeof r === 'object' && 'error' in r) throw new LogsvcError(r.error.code, r.error.message);
    return r as T;
  }

  /**
   * Parses and packs a lookup file on a worker (a file on disk is read there, a CSV file streamed);
   * the table comes back in shared memory.
   */
  async pack(source: PackSource, kind: FileKind, hash: string, maxRows: number): Promise<PackedTable> {
    let task: PackTask;
    let transferList: ArrayBuffer[] = [];
    if ('bytes' in source) {
      const copy = new Uint8Array(source.bytes);
      task = { source: { bytes: copy }, kind, hash, maxRows };
      transferList = [copy.buffer];
    } else task = { source, kind, hash, maxRows };
    const r = (await this.foreground.run(task, { name: 'table', transferList })) as PackTaskResult;
    return unwrapPackResult(r);
  }

  /** Utilisation (0..1 since the pool's first task), queued tasks and live threads of each pool, for the metrics (zeros for a pool not made yet). */
  stats(): { pool: string; utilization: number; queued: number; threads: number }[] {
    const of = (pool: string, p: Piscina | null) => ({ pool, utilization: p?.utilization ?? 0, queued: p?.queueSize ?? 0, threads: p?.threads.length ?? 0 });
    return [of('foreground', this.foregroundPool), of('background', this.backgroundPool), of('query', this.queryPool)];
  }

  async close(): Promise<void> {
    await Promise.all([this.foregroundPool, this.backgroundPool, this.queryPool].map((p) => p?.destroy()));
  }
}
