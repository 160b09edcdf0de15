/**
 * The worker pool (piscina's only importer besides the task file): one pool sized to the cores,
 * shared by every partition. Partitions keep their own order (one block in flight each); the pool
 * is the unit of parallelism.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { readBlockMeta, type BlockColumns } from '../segments/block.js';
import type { BlockEncoder, EncodedBlock } from './block-encoder.js';

export class PooledBlockEncoder implements BlockEncoder {
  private readonly pool: Piscina;

  constructor(threads = Math.max(1, availableParallelism())) {
    this.pool = new Piscina({
      filename: new URL('./block-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
    });
  }

  async encode(columns: BlockColumns): Promise<EncodedBlock> {
    const ab = (await this.pool.run(columns)) as ArrayBuffer;
    const bytes = Buffer.from(ab);
    return { bytes, meta: readBlockMeta(bytes, 0)! };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
