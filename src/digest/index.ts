export { Digest, type DigestOptions } from './digest.js';
export { PartitionDigester, type DigestSettings } from './partition-digester.js';
export { InlineBlockEncoder, type BlockEncoder, type EncodedBlock } from './block-encoder.js';
export { buildBlock, type BlockPart } from './block-parts.js';
