#!/usr/bin/env node
/**
 * What a block format costs the writer: the same block contents (seeded events, encoded once by
 * this build's encodeBlockContent) assembled as format 5 and as format 6 (column summaries, a
 * compressed head) alternately in this process, best CPU µs per block of --repeat, and the bytes
 * each stores. The difference per event is what the format adds to ingest's CPU per event.
 *
 *   node bench/scan/assemble.mjs [--dataset accesslog|json] [--events 1000] [--blocks 10] [--repeat 15]
 */
import { parseArgs } from 'node:util';
import { createDataset } from '../lib/datasets.mjs';

const { values } = parseArgs({ options: { dataset: { type: 'string', default: 'accesslog' }, events: { type: 'string', default: '1000' }, blocks: { type: 'string', default: '10' }, repeat: { type: 'string', default: '15' } } });
const dist = new URL('../../dist/', import.meta.url);
const { emptyColumns, appendEvent, encodeBlockContent, assembleBlock, assembleBlockV5 } = await import(new URL('segments/block.js', dist).href);
const { lz4Codec } = await import(new URL('segments/codec.js', dist).href);
const { JsonParser } = await import(new URL('ingest/parsers/json.js', dist).href);
const gen = createDataset(values.dataset, 1);
const json = new JsonParser();
const contents = [];
let ts = 1.7e12;
for (let b = 0; b < Number(values.blocks); b++) {
  const c = emptyColumns();
  for (let i = 0; i < Number(values.events); i++) {
    const e = gen();
    ts += 40;
    const fields = values.dataset === 'json' ? json.parse(e.rawstring, 1000).fields : Object.fromEntries(Object.entries(e.attributes).map(([k, v]) => [k, String(v)]));
    appendEvent(c, ts, 'Z', e.rawstring, fields, ts, 1, c.count);
  }
  contents.push(encodeBlockContent(c));
}
const formats = /** @type {const} */ ([
  ['format 5', assembleBlockV5],
  ['format 6', assembleBlock],
]);
const best = formats.map(() => Infinity);
const bytes = formats.map(([, f]) => contents.reduce((n, c) => n + f(c, lz4Codec).length, 0));
for (let r = 0; r < Number(values.repeat); r++) {
  formats.forEach(([, f], i) => {
    const c0 = process.cpuUsage();
    for (const c of contents) f(c, lz4Codec);
    const u = process.cpuUsage(c0);
    best[i] = Math.min(best[i], (u.user + u.system) / contents.length);
  });
}
process.stdout.write(`${values.dataset}, ${values.blocks} blocks of ${values.events} events; best CPU µs per block of ${values.repeat}\n`);
formats.forEach(([name], i) => process.stdout.write(`  ${name}: ${best[i].toFixed(0)} µs per block, ${bytes[i]} bytes\n`));
process.stdout.write(`  format 6 - format 5: ${((best[1] - best[0]) / Number(values.events)).toFixed(3)} µs per event, ${(((bytes[1] - bytes[0]) / bytes[0]) * 100).toFixed(2)} % bytes\n`);
