#!/usr/bin/env node
/**
 * Idle RSS of an empty node, A/B: starts this checkout's node and another build's alternately, each
 * exactly as bench/peers/run.mjs starts its node (`startLogsvcNode` with bench/peers' NODE_CONFIG on
 * an empty temp dir), waits, reads VmRSS / RssAnon / RssFile and the thread count from
 * /proc/<pid>/status, stops it by its pid, and prints each reading and the sorted lists and medians.
 *
 *   node bench/footprint/idle-ab.mjs --bin /work/base/bin/logsvc [--starts 7] [--seconds 5]
 *        [--smaps DIR]   also copy /proc/<pid>/smaps of each start into DIR (A-1.smaps, B-1.smaps, ...)
 *
 * A is --bin, B is this checkout's bin/logsvc; the order alternates each round (A first, then B first).
 */
import { parseArgs } from 'node:util';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { LOGSVC_BIN, cleanupAll, cleanupSync, makeTempDir, removeTempDir, startLogsvcNode } from '../lib/processes.mjs';
import { NODE_CONFIG, median } from '../peers/session.mjs';

const { values } = parseArgs({
  options: {
    bin: { type: 'string' },
    starts: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '5' },
    smaps: { type: 'string' },
  },
});
if (values.bin === undefined) {
  process.stderr.write('usage: node bench/footprint/idle-ab.mjs --bin OTHER/bin/logsvc [--starts N] [--seconds S] [--smaps DIR]\n');
  process.exit(2);
}
const starts = Number(values.starts);
const idleMs = Number(values.seconds) * 1000;
process.on('exit', cleanupSync);
process.on('SIGINT', () => void cleanupAll().then(() => process.exit(130)));
if (values.smaps !== undefined) await mkdir(values.smaps, { recursive: true });

/** @param {number} pid */
async function readStatus(pid) {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  /** @param {string} key */
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), threads: Number(/^Threads:\s+(\d+)/m.exec(text)?.[1]) };
}

/** @param {'A' | 'B'} who @param {string} bin @param {number} round */
async function one(who, bin, round) {
  const root = await makeTempDir(`idle-ab-${who}-`);
  try {
    const node = await startLogsvcNode({ rootDir: root, config: NODE_CONFIG, nodeFlags: [], bin });
    await new Promise((r) => setTimeout(r, idleMs));
    const s = await readStatus(node.server.pid);
    if (values.smaps !== undefined) await writeFile(join(values.smaps, `${who}-${round}.smaps`), await readFile(`/proc/${node.server.pid}/smaps`)); // (copyFile reads /proc files as empty)
    await node.server.stop(5_000);
    const load = loadavg()[0]?.toFixed(2);
    console.log(`${who} start ${round}: RSS ${(s.rss / 1e6).toFixed(1)} MB (anon ${(s.anon / 1e6).toFixed(1)}, file ${(s.file / 1e6).toFixed(1)}), ${s.threads} threads, load ${load}`);
    return s;
  } finally {
    await removeTempDir(root);
  }
}

/** @type {Record<'A' | 'B', Array<{ rss: number, anon: number, file: number, threads: number }>>} */
const got = { A: [], B: [] };
for (let i = 1; i <= starts; i++) {
  const order = i % 2 === 1 ? /** @type {const} */ (['A', 'B']) : /** @type {const} */ (['B', 'A']);
  for (const who of order) got[who].push(await one(who, who === 'A' ? /** @type {string} */ (values.bin) : LOGSVC_BIN, i));
}
for (const who of /** @type {const} */ (['A', 'B'])) {
  const mb = (/** @type {number[]} */ xs) => xs.map((x) => (x / 1e6).toFixed(1));
  const rss = got[who].map((s) => s.rss).sort((a, b) => a - b);
  const anon = got[who].map((s) => s.anon).sort((a, b) => a - b);
  const file = got[who].map((s) => s.file).sort((a, b) => a - b);
  console.log(`${who} (${who === 'A' ? values.bin : LOGSVC_BIN}): RSS sorted ${mb(rss).join(', ')}; median ${((median(rss) ?? 0) / 1e6).toFixed(1)} MB; anon ${mb(anon).join(', ')}; file ${mb(file).join(', ')}`);
}
