/**
 * The machine's limits over the very segment files the node wrote, in this process, one thread:
 *
 * - LZ4: every block body decompressed with lz4-napi `uncompressSync` (what the node uses), timed
 *   over the whole set; reported as compressed input MB/s, uncompressed output MB/s, and
 *   raw-equivalent MB/s (the corpus's @rawstring bytes over the same time: comparable with a
 *   query's raw MB/s).
 * - `Buffer.indexOf` of the rare token over the decompressed @rawstring bytes of every block
 *   (the `raw` column, extracted beforehand, untimed), every occurrence counted. Raw strings stored
 *   as templates over the field columns (segment format 3) are rebuilt with the node's own decoder
 *   (dist/), also untimed.
 * - msgpack decoding of the block bodies (msgpackr, as the node), for reference.
 *
 * Files are read whole into memory first, so the timings hold no disk reads. Each measurement is
 * repeated and the best pass is kept.
 */
import { uncompressSync } from 'lz4-napi';
import { decodeBlockBody, readSegments } from '../lib/segments.mjs';
import { decodeRawAndFields } from '../../dist/segments/block.js';
import { RARE_TOKEN } from './options.mjs';

/**
 * @typedef {object} LimitsResult
 * @property {number} files
 * @property {number} closedFiles
 * @property {number} damagedBytes
 * @property {number} blocks
 * @property {number} events events in the blocks' headers
 * @property {number} fileBytes
 * @property {number} compressedBytes block bodies, as stored
 * @property {number} uncompressedBytes block bodies, decompressed
 * @property {number} rawBytes raw-string bytes in the blocks' raw columns
 * @property {number} rareHits occurrences of the rare token in those bytes
 * @property {number} decompressSeconds best pass over every block
 * @property {number} decompressInMBps
 * @property {number} decompressOutMBps
 * @property {number} decompressRawMBps raw-equivalent
 * @property {number} unpackSeconds best pass
 * @property {number} unpackOutMBps decompressed MB/s through msgpack decoding
 * @property {number} indexOfSeconds best pass
 * @property {number} indexOfMBps raw MB/s
 * @property {number} scanRawMBps decompress + indexOf, one core: raw MB / (decompress + indexOf seconds)
 * @property {number} passes
 */

/**
 * @param {object} o
 * @param {string} o.segmentsDir the repository's segment directory
 * @param {number} o.passes
 * @param {(line: string) => void} o.progress
 * @returns {Promise<LimitsResult>}
 */
export async function measureLimits(o) {
  const tRead = performance.now();
  const files = await readSegments(o.segmentsDir);
  const blocks = files.flatMap((f) => f.blocks);
  const compressedBytes = blocks.reduce((n, b) => n + b.body.length, 0);
  const fileBytes = files.reduce((n, f) => n + f.bytes, 0);
  o.progress(`[limits] read ${files.length} segment files, ${blocks.length} blocks, ${(fileBytes / 1e6).toFixed(1)} MB in ${((performance.now() - tRead) / 1000).toFixed(1)} s`);
  if (blocks.length === 0) throw new Error(`no segment blocks under ${o.segmentsDir}`);

  // LZ4, every block, one thread.
  let decompressSeconds = Infinity;
  let uncompressedBytes = 0;
  for (let p = 0; p < o.passes; p++) {
    let out = 0;
    const t0 = performance.now();
    for (const b of blocks) out += uncompressSync(b.body).length;
    const s = (performance.now() - t0) / 1000;
    decompressSeconds = Math.min(decompressSeconds, s);
    uncompressedBytes = out;
    o.progress(`[limits] LZ4 pass ${p + 1}/${o.passes}: ${(out / 1e6).toFixed(1)} MB out in ${s.toFixed(3)} s`);
  }

  // The raw column of each block (copied out, so the decompressed bodies can go); msgpack timed.
  /** @type {Buffer[]} */
  const raws = [];
  let unpackSeconds = 0;
  let rawBytes = 0;
  let events = 0;
  for (const b of blocks) {
    const body = uncompressSync(b.body);
    const t0 = performance.now();
    const d = decodeBlockBody(body);
    unpackSeconds += (performance.now() - t0) / 1000;
    let raw;
    if (d.raw?.e === 'j' && d.raw.b instanceof Uint8Array) raw = Buffer.from(d.raw.b); // a copy
    else if (d.raw?.e === 't') raw = Buffer.from(decodeRawAndFields(d).raw.join(''), 'utf8');
    else throw new Error(`${b.file} block at ${b.pos}: raw column encoding "${d.raw?.e}" is not one this reader knows ("j", "t")`);
    raws.push(raw);
    rawBytes += raw.length;
    events += b.eventCount;
  }

  // indexOf of the rare token over every block's raw bytes, every occurrence.
  const token = Buffer.from(RARE_TOKEN);
  let indexOfSeconds = Infinity;
  let rareHits = 0;
  for (let p = 0; p < o.passes; p++) {
    let hits = 0;
    const t0 = performance.now();
    for (const raw of raws) {
      for (let i = raw.indexOf(token); i !== -1; i = raw.indexOf(token, i + token.length)) hits++;
    }
    const s = (performance.now() - t0) / 1000;
    indexOfSeconds = Math.min(indexOfSeconds, s);
    rareHits = hits;
    o.progress(`[limits] indexOf pass ${p + 1}/${o.passes}: ${(rawBytes / 1e6).toFixed(1)} MB raw in ${s.toFixed(3)} s, ${hits} hits`);
  }

  return {
    files: files.length,
    closedFiles: files.filter((f) => f.closed).length,
    damagedBytes: files.reduce((n, f) => n + f.damagedBytes, 0),
    blocks: blocks.length,
    events,
    fileBytes,
    compressedBytes,
    uncompressedBytes,
    rawBytes,
    rareHits,
    decompressSeconds,
    decompressInMBps: compressedBytes / 1e6 / decompressSeconds,
    decompressOutMBps: uncompressedBytes / 1e6 / decompressSeconds,
    decompressRawMBps: rawBytes / 1e6 / decompressSeconds,
    unpackSeconds,
    unpackOutMBps: uncompressedBytes / 1e6 / unpackSeconds,
    indexOfSeconds,
    indexOfMBps: rawBytes / 1e6 / indexOfSeconds,
    scanRawMBps: rawBytes / 1e6 / (decompressSeconds + indexOfSeconds),
    passes: o.passes,
  };
}
