/**
 * The worker pool, piscina's one home: a single pool sized to the cores, shared by every digest
 * partition (block building) and by ingest (parsing large bodies). Inputs are transferred to the
 * workers when they own their memory.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { BlockPart } from '../digest/block-parts.js';
import { toEncoded, type BlockEncoder, type EncodedBlock } from '../digest/block-encoder.js';
import type { IngestTask, IngestTaskResult } from '../ingest/pipeline.js';

const owns = (b: Uint8Array): boolean => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;

export class WorkerPool implements BlockEncoder {
  private readonly pool: Piscina;

  constructor(threads = Math.max(1, availableParallelism())) {
    this.pool = new Piscina({
      filename: new URL('./task-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
    });
  }

  async encode(parts: BlockPart[]): Promise<EncodedBlock> {
    const transferList = parts.filter((p) => owns(p.events)).map((p) => p.events.buffer as ArrayBuffer);
    const ab = (await this.pool.run(parts, { name: 'block', transferList })) as ArrayBuffer;
    return toEncoded(Buffer.from(ab));
  }

  async ingest(task: IngestTask): Promise<IngestTaskResult> {
    if (!owns(task.body)) task = { ...task, body: new Uint8Array(task.body) };
    return (await this.pool.run(task, { name: 'ingest', transferList: [task.body.buffer as ArrayBuffer] })) as IngestTaskResult;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
