/**
 * Encoding a block (column packing, bloom filter, LZ4, CRC) is the digest's CPU work. `BlockEncoder`
 * is the seam: `InlineBlockEncoder` runs on the calling thread (tests, tiny deployments) and
 * `PooledBlockEncoder` (pool.ts) runs on the shared Piscina pool.
 */
import { encodeBlock, readBlockMeta, type BlockColumns, type BlockMeta } from '../segments/block.js';
import { lz4Codec } from '../segments/codec.js';

export interface EncodedBlock {
  bytes: Buffer;
  meta: BlockMeta;
}

export interface BlockEncoder {
  encode(columns: BlockColumns): Promise<EncodedBlock>;
  close(): Promise<void>;
}

export function encodeToBlock(columns: BlockColumns): EncodedBlock {
  const bytes = encodeBlock(columns, lz4Codec);
  return { bytes, meta: readBlockMeta(bytes, 0)! };
}

export class InlineBlockEncoder implements BlockEncoder {
  encode(columns: BlockColumns): Promise<EncodedBlock> {
    return Promise.resolve(encodeToBlock(columns));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
