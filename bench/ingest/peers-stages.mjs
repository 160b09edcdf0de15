#!/usr/bin/env node
/**
 * The ingest task and the block build per event on the peers corpus (bench/peers: the bodies the
 * peers run sends, nested attributes and all), for this build and, with --against, another build's
 * dist/, alternated round by round in one process (best of --rounds each), with a check that both
 * builds make the same block bytes. One thread, no HTTP, no pool, no disk: a steadier figure than
 * the end-to-end run on a shared machine. Blocks are sealed as the digest seals them (1 MiB of
 * received size).
 *
 *   node bench/ingest/peers-stages.mjs --dataset json --bodies 30 --against /work/base/dist
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberOption } from '../lib/cli.mjs';

const { values } = parseArgs({
  options: { cpu: { type: 'boolean', default: false }, dataset: { type: 'string', default: 'json' }, events: { type: 'string', default: '300000' }, bodies: { type: 'string', default: '30' }, rounds: { type: 'string', default: '9' }, against: { type: 'string' }, help: { type: 'boolean' } },
});
if (values.help) {
  process.stdout.write('Usage: node bench/ingest/peers-stages.mjs [--dataset json|accesslog] [--events N (the corpus size: its file)] [--bodies N] [--rounds N] [--against OTHER/dist] [--cpu (the process\'s CPU time, not wall time: steadier on a loaded machine)]\n');
  process.exit(0);
}
/** @type {string[]} */
const problems = [];
const num = numberOption(problems);
const bodyCount = num('bodies', values.bodies ?? '30', 1, 10000, true);
const rounds = num('rounds', values.rounds ?? '9', 1, 100, true);
const file = join(homedir(), '.cache', 'logsvc', 'peers-corpus', `v1-${values.dataset}-${values.events}-1000-1.logsvc.bodies`);
if (!existsSync(file)) problems.push(`${file} is missing: run bench/peers/run.mjs --${values.dataset === 'json' ? 'json' : 'access'} ${values.events} once to make it`);
if (problems.length > 0) throw new Error(problems.join('; '));

// The first bodies of the corpus file (u32 length, body).
const bodies = [];
const fd = openSync(file, 'r');
const head = Buffer.alloc(4);
for (let pos = 0; bodies.length < bodyCount && readSync(fd, head, 0, 4, pos) === 4; ) {
  const body = Buffer.alloc(head.readUInt32LE(0));
  readSync(fd, body, 0, body.length, pos + 4);
  pos += 4 + body.length;
  bodies.push(body);
}
closeSync(fd);

const limits = { maxEventsPerRequest: 1e6, maxEventBytes: 1e6, maxFieldsPerEvent: 1000, maxJsonDepth: 64 };
const task = (/** @type {Buffer} */ body) => ({ kind: 'structured', body, contentEncoding: undefined, maxDecompressedBytes: 1e9, limits, parser: null, repositoryId: 'r', at: 1 });

/** One build's stages over the bodies. @param {string} dir a dist/ directory */
async function side(dir) {
  const dist = new URL(`file://${dir.replace(/\/?$/, '/')}`);
  const { runIngestTask } = await import(new URL('ingest/pipeline.js', dist).href);
  const { readSummary, groupSection } = await import(new URL('events/record.js', dist).href);
  const { buildBlock } = await import(new URL('digest/block-parts.js', dist).href);
  const { nativeBlockBuilder, nativeBlockUnavailable } = await import(new URL('digest/native-block.js', dist).href);
  if (nativeBlockBuilder === null) throw new Error(`${dir}: no native block builder (${nativeBlockUnavailable})`);
  const blocks = [];
  let open = [];
  let openBytes = 0;
  let events = 0;
  bodies.forEach((b, i) => {
    const r = runIngestTask(task(b));
    if (!r.ok) throw new Error(`${dir}: the ingest task refused body ${i}: ${r.message}`);
    const s = readSummary(r.payload);
    s.groups.forEach((/** @type {{ b: number }} */ g, k) => {
      const events_ = groupSection(r.payload, s, k);
      open.push({ events: events_, offset: i * 4096, base: 0, skip: 0, at: 1 });
      openBytes += g.b;
    });
    events += 1000;
    if (openBytes >= 1024 * 1024) {
      blocks.push(open);
      open = [];
      openBytes = 0;
    }
  });
  if (open.length > 0) blocks.push(open);
  return {
    dir,
    events,
    out: blocks.map((parts) => buildBlock(parts)),
    stages: {
      'ingest task (native parser)': () => bodies.forEach((b) => runIngestTask(task(b))),
      'native block build alone': () => blocks.forEach((parts) => nativeBlockBuilder.build(parts)),
      'block build (native + LZ4, frames)': () => blocks.forEach((parts) => buildBlock(parts)),
    },
  };
}

const sides = [await side(new URL('../../dist/', import.meta.url).pathname)];
if (values.against !== undefined) sides.push(await side(values.against));
process.stdout.write(`${values.dataset}: ${bodies.length} bodies, ${sides[0]?.events} events, ${sides[0]?.out.length} blocks, best of ${rounds} rounds (alternated)${values.cpu ? ', CPU time' : ''}\n`);
if (sides.length === 2) {
  const [a, b] = /** @type {[any, any]} */ (sides);
  const same = a.out.filter((/** @type {Buffer} */ x, /** @type {number} */ i) => x.equals(b.out[i])).length;
  process.stdout.write(`blocks with the same bytes in both builds: ${same}/${a.out.length}\n`);
}
/** Milliseconds: of the wall clock, or with --cpu of this process's CPU (user + system). */
const clock = values.cpu ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : () => performance.now();
/** @type {Map<string, number>} */
const best = new Map();
for (let r = 0; r < rounds; r++) {
  for (const s of sides) {
    for (const [name, fn] of Object.entries(s.stages)) {
      const t0 = clock();
      fn();
      const us = ((clock() - t0) * 1000) / s.events;
      const key = `${name} | ${s.dir}`;
      best.set(key, Math.min(best.get(key) ?? Infinity, us));
    }
  }
}
for (const [key, us] of best) process.stdout.write(`${key.padEnd(90)} ${us.toFixed(2).padStart(6)} µs/event\n`);
