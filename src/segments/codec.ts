/** The block compression seam: LZ4 via lz4-napi, the package's only importer. */
import { compressSync, uncompressSync } from 'lz4-napi';

export interface BlockCodec {
  readonly name: string;
  compress(data: Buffer): Buffer;
  decompress(data: Buffer): Buffer;
}

export const lz4Codec: BlockCodec = {
  name: 'lz4',
  compress: (data) => compressSync(data),
  decompress: (data) => uncompressSync(data),
};
