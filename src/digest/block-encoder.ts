/**
 * Building a block (decode the record sections, columns, bloom filter, LZ4, CRC) is the digest's CPU
 * work. `BlockEncoder` is the seam: `InlineBlockEncoder` runs on the calling thread (tests, tiny
 * deployments) and the worker pool (src/workers) runs it off the main thread.
 */
import { readBlockMeta, type BlockMeta } from '../segments/block.js';
import { buildBlock, type BlockPart } from './block-parts.js';

export interface EncodedBlock {
  bytes: Buffer;
  meta: BlockMeta;
}

export interface BlockEncoder {
  encode(parts: BlockPart[]): Promise<EncodedBlock>;
  close(): Promise<void>;
}

export function toEncoded(bytes: Buffer): EncodedBlock {
  return { bytes, meta: readBlockMeta(bytes, 0)! };
}

export class InlineBlockEncoder implements BlockEncoder {
  encode(parts: BlockPart[]): Promise<EncodedBlock> {
    return Promise.resolve(toEncoded(buildBlock(parts)));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
