#!/usr/bin/env node
/**
 * The CPU cost of each stage of ingest and digest, per event, on one thread of this process: what
 * the ingest benchmark's end-to-end number is made of. Seeded request bodies of a dataset go
 * through the node's own code (the built dist/): JSON.parse alone (the parse-only server's work),
 * the whole ingest task (parse, normalize, record encode) as the node runs it (natively where
 * native/structured_ingest.cc takes the body) and in JavaScript, record encode alone, record decode,
 * and the block build of blocks sealed at 1 MiB of estimated size, as the digest seals them: as the
 * node builds them (natively where native/block_builder.cc takes the block), in JavaScript (decode +
 * columns + skip index + LZ4), and encodeBlock alone.
 * Best of --repeat runs. No HTTP, no pool, no disk.
 *
 *   node bench/ingest/stages.mjs --dataset accesslog
 */
import { parseArgs } from 'node:util';
import { buildBodyPool } from '../lib/bodies.mjs';
import { DATASET_NAMES } from '../lib/datasets.mjs';
import { numberOption } from '../lib/cli.mjs';

const { values } = parseArgs({ options: { dataset: { type: 'string', default: 'accesslog' }, events: { type: 'string', default: '20000' }, repeat: { type: 'string', default: '5' }, iso: { type: 'boolean' }, help: { type: 'boolean' } } });
if (values.help) {
  process.stdout.write(`Usage: node bench/ingest/stages.mjs [--dataset ${DATASET_NAMES.join('|')}] [--events N] [--repeat N] [--iso]\n  --iso: timestamps as ISO 8601 strings with an offset ("2026-...T...+01:00") instead of epoch ms\n`);
  process.exit(0);
}
const dataset = /** @type {import('../lib/datasets.mjs').DatasetName} */ (values.dataset);
if (!DATASET_NAMES.includes(dataset)) throw new Error(`--dataset must be one of ${DATASET_NAMES.join(', ')}`);
/** @type {string[]} */
const problems = [];
const num = numberOption(problems);
const events = num('events', values.events ?? '20000', 1000, 1e7, true);
const repeat = num('repeat', values.repeat ?? '5', 1, 100, true);
if (problems.length > 0) throw new Error(problems.join('; '));

const dist = new URL('../../dist/', import.meta.url);
const { runIngestTask, prepareStructuredNatively } = await import(new URL('ingest/pipeline.js', dist).href);
const { nativeStructuredUnavailable } = await import(new URL('ingest/native-structured.js', dist).href);
const { readSummary, groupSection, decodeGroupColumns, decodeGroupEvents, encodeRecord } = await import(new URL('events/record.js', dist).href);
const { buildBlock, buildBlockInJs } = await import(new URL('digest/block-parts.js', dist).href);
const { nativeBlockBuilder, nativeBlockUnavailable } = await import(new URL('digest/native-block.js', dist).href);
const { emptyColumns, appendColumns, encodeBlock } = await import(new URL('segments/block.js', dist).href);
const { lz4Codec } = await import(new URL('segments/codec.js', dist).href);

const BATCH = 500;
const pool = buildBodyPool({ dataset, mode: 'structured', attributes: true, batch: BATCH, poolEvents: events, seed: 1, gzip: false, minBodies: 1, maxPoolBytes: 1e9 });
if (values.iso) {
  // The same events with ISO 8601 timestamps (an offset, so the zone is kept too).
  for (const b of pool.bodies) {
    const items = JSON.parse(b.json.toString('utf8'));
    for (const item of items) for (const e of item.events) e.timestamp = new Date(e.timestamp).toISOString().replace('Z', '+01:00');
    b.json = Buffer.from(JSON.stringify(items));
  }
}
const n = pool.bodies.length * BATCH;
const limits = { maxEventsPerRequest: 1e6, maxEventBytes: 1e6, maxFieldsPerEvent: 1000, maxJsonDepth: 64 };
const task = (/** @type {{ json: Buffer }} */ b) => ({ kind: 'structured', body: b.json, contentEncoding: undefined, maxDecompressedBytes: 1e9, limits, parser: null, repositoryId: 'r', at: 1 });

/** @param {string} name @param {() => void} fn */
function stage(name, fn) {
  fn();
  let best = Infinity;
  for (let r = 0; r < repeat; r++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  process.stdout.write(`${name.padEnd(44)} ${((best * 1000) / n).toFixed(2).padStart(7)} µs/event\n`);
}

const results = pool.bodies.map((b) => runIngestTask(task(b)));
if (!results[0].ok) throw new Error(`the ingest task refused the dataset: ${results[0].message}`);
const sections = results.map((r) => groupSection(r.payload, readSummary(r.payload), 0));
const decoded = sections.map((s) => decodeGroupEvents(s));
// Blocks sealed as the digest seals them: at digest.block_target_bytes (1 MiB) of estimated size.
const BLOCK_TARGET_BYTES = 1024 * 1024;
const blocks = [];
let open = [];
let openBytes = 0;
results.forEach((r, i) => {
  open.push({ events: sections[i], offset: i * 1000, base: 0, skip: 0, at: 1 });
  openBytes += readSummary(r.payload).groups[0].b;
  if (openBytes >= BLOCK_TARGET_BYTES) {
    blocks.push(open);
    open = [];
    openBytes = 0;
  }
});
if (open.length > 0) blocks.push(open);
const columns = blocks.map((parts) => {
  const c = emptyColumns();
  for (const p of parts) appendColumns(c, decodeGroupColumns(p.events), 0, p.at, p.offset, p.base);
  return c;
});

process.stdout.write(`${dataset}: ${n.toLocaleString('en-US')} events, ${(pool.rawBytes / n).toFixed(0)} B raw per event, ${blocks.length} blocks, best of ${repeat}\n`);
stage('JSON.parse of the bodies', () => pool.bodies.forEach((b) => JSON.parse(b.json.toString('utf8'))));
if (nativeStructuredUnavailable !== null) process.stdout.write(`native structured parser off: ${nativeStructuredUnavailable}\n`);
const nativeBodies = nativeStructuredUnavailable === null ? pool.bodies.filter((b) => prepareStructuredNatively(b.json, 'r', 1, limits) !== null).length : 0;
stage(`ingest task as the node does (native ${nativeStructuredUnavailable === null ? `${nativeBodies}/${pool.bodies.length}` : 'off'})`, () => pool.bodies.forEach((b) => runIngestTask(task(b))));
stage('ingest task in JavaScript (parse..record)', () => pool.bodies.forEach((b) => runIngestTask(task(b), false)));
stage('  record encode alone', () => decoded.forEach((evs) => encodeRecord({ repo: 'r', at: 1, groups: [{ ds: 'd', tags: {}, events: evs }] })));
stage('record decode by column', () => sections.forEach((s) => decodeGroupColumns(s)));
if (nativeBlockBuilder === null) process.stdout.write(`native block builder off: ${nativeBlockUnavailable}\n`);
const natively = nativeBlockBuilder === null ? 0 : blocks.filter((parts) => nativeBlockBuilder.build(parts) !== null).length;
stage(`block build as the node does (native ${nativeBlockBuilder === null ? "off" : `${natively}/${blocks.length}`})`, () => blocks.forEach((parts) => buildBlock(parts)));
stage('block build in JavaScript (decode..LZ4)', () => blocks.forEach((parts) => buildBlockInJs(parts)));
stage('  encodeBlock alone', () => columns.forEach((c) => encodeBlock(c, lz4Codec)));
