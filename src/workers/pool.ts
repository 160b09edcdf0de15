/**
 * The worker pool, piscina's one home: a single pool sized to the cores, shared by every digest
 * partition (block building), by ingest (parsing large bodies) and by queries (scanning blocks).
 * Ingest bodies are transferred to the workers; block parts are copied, since query snapshots share them.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { LogsvcError } from '../lib/errors.js';
import type { BlockPart } from '../digest/block-parts.js';
import { toEncoded, type BlockEncoder, type EncodedBlock } from '../digest/block-encoder.js';
import { hasCustomParsers, runIngestTask, type IngestTask, type IngestTaskResult } from '../ingest/pipeline.js';
import type { ScanResult, ScanTask } from '../query/scan.js';
import type { FileKind, PackedTable, TablePacker } from '../files/index.js';
import { unwrapPackResult, type PackTaskResult } from '../files/pack-task.js';

const owns = (b: Uint8Array): boolean => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;

export class WorkerPool implements BlockEncoder, TablePacker {
  readonly size: number;
  private readonly pool: Piscina;
  private readonly threads: number;
  /** Tasks handed to the pool and not finished yet. */
  private busy = 0;

  constructor(threads = Math.max(1, availableParallelism())) {
    this.threads = threads;
    this.size = threads;
    this.pool = new Piscina({
      filename: new URL('./task-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
    });
  }

  async encode(parts: BlockPart[]): Promise<EncodedBlock> {
    // Copied to the worker, not transferred: queries may hold the same parts (a snapshot of the
    // digest's memory) and clone them to their own tasks later. A copy is ~1 ms next to the build.
    this.busy++;
    try {
      const ab = (await this.pool.run(parts, { name: 'block' })) as ArrayBuffer;
      return toEncoded(Buffer.from(ab));
    } finally {
      this.busy--;
    }
  }

  /**
   * Parses an ingest request on a free worker; when every worker is taken (block builds, about
   * 80 ms each for 1 MB), on the calling thread instead, so that an acknowledgement never waits
   * behind a block build (what set the ack p99 when requests queued on the pool). A task that
   * carries custom parsers always waits for a worker: a parser may use its whole time budget
   * (parsers.max_request_ms), which the HTTP thread (acks, queries, health) must never spend.
   */
  async ingest(task: IngestTask): Promise<IngestTaskResult> {
    if (this.busy >= this.threads && !hasCustomParsers(task)) return runIngestTask(task);
    if (!owns(task.body)) task = { ...task, body: new Uint8Array(task.body) };
    this.busy++;
    try {
      return (await this.pool.run(task, { name: 'ingest', transferList: [task.body.buffer as ArrayBuffer] })) as IngestTaskResult;
    } finally {
      this.busy--;
    }
  }

  /** Scans blocks for a query (src/query/scan.ts); errors come back as LogsvcError data. */
  async scan(task: ScanTask): Promise<ScanResult> {
    this.busy++;
    try {
      const r = (await this.pool.run(task, { name: 'query' })) as ScanResult | { error: ReturnType<LogsvcError['toJSON']> };
      if ('error' in r) throw new LogsvcError(r.error.code, r.error.message);
      return r;
    } finally {
      this.busy--;
    }
  }

  /** Parses and packs an uploaded lookup file on a worker; the table comes back in shared memory. */
  async pack(bytes: Uint8Array, kind: FileKind, hash: string, maxRows: number): Promise<PackedTable> {
    const copy = new Uint8Array(bytes);
    this.busy++;
    try {
      const r = (await this.pool.run({ bytes: copy, kind, hash, maxRows }, { name: 'table', transferList: [copy.buffer] })) as PackTaskResult;
      return unwrapPackResult(r);
    } finally {
      this.busy--;
    }
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
