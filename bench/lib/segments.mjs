/**
 * Reading a node's segment files read-only, without the node's code (docs/formats/segment.md,
 * versions 1 to 4): list `<data-dir>/segments/<repository id>/<datasource id>/<segment id>.seg`, find each
 * file's blocks (header, metadata, blocks back to back, optional footer + trailer), and hand out
 * each block's LZ4 body (lz4-napi `compressSync` framing: a 4-byte uncompressed-size prefix) for a
 * benchmark to decompress and decode. Blocks are checked by their CRC-32C; a file is read up to its
 * first block that does not check out, and the rest of it is counted as damaged.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { Unpackr } from 'msgpackr';

const SEGMENT_MAGIC = Buffer.from('LSEG');
const FOOTER_MAGIC = Buffer.from('LSEF');
/** Per format version: the block magic, header size, and where the gram filter length is (-1: none). */
const LAYOUTS = {
  1: { magic: Buffer.from('LBLK'), header: 64, gramAt: -1 },
  2: { magic: Buffer.from('LBK2'), header: 68, gramAt: 60 },
  3: { magic: Buffer.from('LBK2'), header: 68, gramAt: 60 },
  4: { magic: Buffer.from('LBK2'), header: 68, gramAt: 60 },
};
const TRAILER_BYTES = 12;

/** Decodes metadata and block bodies the way the node writes them (plain maps, no records). */
const unpackr = new Unpackr({ useRecords: false, moreTypes: false });

/**
 * @typedef {object} SegmentBlock
 * @property {string} file
 * @property {number} pos offset of the block header in the file
 * @property {number} eventCount
 * @property {number} minTs
 * @property {number} maxTs
 * @property {number} uncompressedLength
 * @property {Buffer} body the LZ4 body (a view into the file's buffer)
 */

/**
 * @typedef {object} SegmentFileBlocks
 * @property {string} file
 * @property {number} bytes file size
 * @property {Record<string, unknown>} meta the header's metadata map (id, repo, ds, tags, ...)
 * @property {boolean} closed a valid footer was found
 * @property {SegmentBlock[]} blocks
 * @property {number} damagedBytes bytes from the first block that did not check out to the blocks' end
 */

/**
 * Every `*.seg` file under `dir`, recursively, sorted by path.
 * @param {string} dir e.g. `<data-dir>/segments` or `<data-dir>/segments/<repository id>`
 * @returns {Promise<string[]>}
 */
export async function listSegmentFiles(dir) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} d */
  const walk = async (d) => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && e.name.endsWith('.seg')) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/**
 * The blocks of one segment file held in memory.
 * @param {Buffer} buf the whole file
 * @param {string} file its path, for messages
 * @returns {SegmentFileBlocks}
 */
export function segmentBlocks(buf, file) {
  if (buf.length < 16 || !buf.subarray(0, 4).equals(SEGMENT_MAGIC)) throw new Error(`${file}: not a segment file (bad magic)`);
  const version = buf.readUInt32LE(4);
  const layout = LAYOUTS[/** @type {1 | 2 | 3 | 4} */ (version)];
  if (layout === undefined) throw new Error(`${file}: segment format version ${version}, this reader knows ${Object.keys(LAYOUTS).join(', ')}`);
  const metaLen = buf.readUInt32LE(8);
  const metaBody = buf.subarray(16, 16 + metaLen);
  if (metaBody.length !== metaLen || crc32c(metaBody) !== buf.readUInt32LE(12)) throw new Error(`${file}: header checksum mismatch`);
  const meta = /** @type {Record<string, unknown>} */ (unpackr.unpack(metaBody));
  const blocksStart = 16 + metaLen;

  let end = buf.length;
  let closed = false;
  if (buf.length >= blocksStart + TRAILER_BYTES && buf.subarray(buf.length - 4).equals(FOOTER_MAGIC)) {
    const len = buf.readUInt32LE(buf.length - TRAILER_BYTES);
    const start = buf.length - TRAILER_BYTES - len;
    if (start >= blocksStart && crc32c(buf.subarray(start, start + len)) === buf.readUInt32LE(buf.length - 8)) {
      end = start;
      closed = true;
    }
  }

  /** @type {SegmentBlock[]} */
  const blocks = [];
  let pos = blocksStart;
  const hl = layout.header;
  while (pos + hl <= end && buf.subarray(pos, pos + 4).equals(layout.magic)) {
    const compressedLength = buf.readUInt32LE(pos + 4);
    const bloomLength = buf.readUInt32LE(pos + 56);
    // Bit 31 (format 4): the filter holds field values' grams too; the length is the rest.
    const gramLength = layout.gramAt < 0 ? 0 : buf.readUInt32LE(pos + layout.gramAt) & 0x7fffffff;
    const next = pos + hl + bloomLength + gramLength + compressedLength;
    if (next > end) break;
    const crc = crc32c(buf.subarray(pos + hl, next), crc32c(buf.subarray(pos, pos + hl - 4)));
    if (crc !== buf.readUInt32LE(pos + hl - 4)) break;
    blocks.push({
      file,
      pos,
      eventCount: buf.readUInt32LE(pos + 12),
      minTs: buf.readDoubleLE(pos + 16),
      maxTs: buf.readDoubleLE(pos + 24),
      uncompressedLength: buf.readUInt32LE(pos + 8),
      body: buf.subarray(next - compressedLength, next),
    });
    pos = next;
  }
  return { file, bytes: buf.length, meta, closed, blocks, damagedBytes: end - pos };
}

/**
 * Reads and parses every segment file under `dir`.
 * @param {string} dir
 * @returns {Promise<SegmentFileBlocks[]>}
 */
export async function readSegments(dir) {
  /** @type {SegmentFileBlocks[]} */
  const out = [];
  for (const file of await listSegmentFiles(dir)) out.push(segmentBlocks(await readFile(file), file));
  return out;
}

/**
 * Decodes an uncompressed block body (a msgpack map of columns, `src/segments/columns.ts`).
 * @param {Uint8Array} body
 * @returns {{ n: number, raw: { e: string, b: Uint8Array, l: unknown }, [column: string]: unknown }}
 */
export function decodeBlockBody(body) {
  return /** @type {any} */ (unpackr.unpack(body));
}
