/**
 * The tasks the worker pool runs (one module, one pool, several named tasks): building a block, the
 * CPU part of an ingest request, and a query's scan of blocks. Block results are transferred back,
 * not copied.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { buildBlock, type BlockPart } from '../digest/block-parts.js';
import { runIngestTask, type IngestTask, type IngestTaskResult } from '../ingest/pipeline.js';
import { isLogsvcError, type LogsvcError } from '../lib/errors.js';
import { ownsBuffer } from '../lib/bytes.js';
import { pruneScanPacked, runScanTask, type PruneScan, type PruneTask, type ScanResult, type ScanTask } from '../query/scan.js';
import { engineLimitError } from '../query/limits.js';
import { fromWire, type WireTask } from './scan-wire.js';
import { runPackTask, type PackTask, type PackTaskResult } from '../files/pack-task.js';

function transferable(bytes: Uint8Array): ArrayBuffer {
  // Hand over the buffer itself when the bytes own it entirely; otherwise a standalone copy.
  // (Buffer#slice is a view, not a copy: copy through ArrayBuffer#slice. Small Buffers live in a
  // shared pool slab that must never be transferred.)
  if (ownsBuffer(bytes)) return bytes.buffer as ArrayBuffer;
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

export function block(parts: BlockPart[]): ArrayBuffer {
  return move(transferable(buildBlock(parts))) as ArrayBuffer;
}

export function ingest(task: IngestTask): IngestTaskResult {
  const r = runIngestTask(task);
  if (!r.ok) return r;
  // The record is transferred back, not cloned: each copy of a few hundred KB on the HTTP thread
  // is external memory that V8 answers with garbage collections there.
  const buffer = transferable(r.payload);
  const value: IngestTaskResult = { ...r, payload: new Uint8Array(buffer) };
  return move({ [transferableSymbol]: [buffer], [valueSymbol]: value }) as unknown as IngestTaskResult;
}

/** What a query task gives back, a LogsvcError (bad data, time limit, an engine limit) as data. */
function asData<T>(work: () => T): T | { error: ReturnType<LogsvcError['toJSON']> } {
  try {
    return work();
  } catch (err) {
    if (isLogsvcError(err)) return { error: err.toJSON() };
    const limit = engineLimitError(err);
    if (limit !== null) return { error: limit.toJSON() };
    throw err;
  }
}

/** A query's scan of some blocks; errors as data. */
export function query(task: WireTask<ScanTask>): ScanResult | { error: ReturnType<LogsvcError['toJSON']> } {
  return asData(() => runScanTask(fromWire(task)));
}

/** The same scan, for a short query (the query pool serves these first: src/workers/query-queue.ts). */
export const queryShort = query;

/** A query's first-round task: its blocks pruned, then scanned or listed (scan.ts pruneScanPacked, over the refs as they crossed); errors as data, as `query`'s. */
export function prune(task: WireTask<PruneTask>): PruneScan | { error: ReturnType<LogsvcError['toJSON']> } {
  return asData(() => pruneScanPacked(task));
}

/** Parses and packs an uploaded lookup file (src/files); the table's SharedArrayBuffer is shared, not copied. */
export function table(task: PackTask): Promise<PackTaskResult> {
  return runPackTask(task);
}
