#!/usr/bin/env node
/**
 * The digest queue's commit latency under the peers run's concurrency, without HTTP, parsing or
 * the digest: `--appenders` loops each append a record of `--bytes` to a partition of an embedded
 * queue (this build's dist/) with `--partitions` partitions and wait for it to be durable, as the
 * ingest requests of bench/peers do. Two ways of choosing the partition are alternated round by
 * round in one process, on one queue, so the disk's swings fall on both alike: `random` (any
 * partition, as ingest chose before 2026-11-29) and `idle` (up to four random draws for one the
 * queue does not report busy, IngestService's choice). Reports appends/s and latency per way.
 *
 *   node bench/ingest/queue-commit.mjs --rounds 10
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberOption } from '../lib/cli.mjs';
import { fsyncProbe } from '../lib/disk.mjs';

const { values: v } = parseArgs({
  options: {
    appenders: { type: 'string', default: '4' },
    bytes: { type: 'string', default: '225000' },
    partitions: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '10' },
    appends: { type: 'string', default: '100' },
    help: { type: 'boolean', default: false },
  },
});
if (v.help) {
  process.stdout.write('Usage: node bench/ingest/queue-commit.mjs [--appenders 4] [--bytes 225000 (an access-log body\'s record)] [--partitions 24] [--rounds 10 (per way)] [--appends 100 (per appender and round)]\n');
  process.exit(0);
}
/** @type {string[]} */
const problems = [];
const num = numberOption(problems);
const o = {
  appenders: num('appenders', v.appenders ?? '4', 1, 64, true),
  bytes: num('bytes', v.bytes ?? '225000', 1, 64 * 1024 * 1024, true),
  partitions: num('partitions', v.partitions ?? '24', 1, 1024, true),
  rounds: num('rounds', v.rounds ?? '10', 1, 1000, true),
  appends: num('appends', v.appends ?? '100', 1, 100_000, true),
};
if (problems.length > 0) throw new Error(problems.join('; '));

const { EmbeddedDigestQueue } = await import(new URL('../../dist/queue/index.js', import.meta.url).href);
const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return logger; } };
const dir = await mkdtemp(join(tmpdir(), 'logsvc-queue-commit-'));
const ways = /** @type {const} */ (['random', 'idle']);
/** @type {Record<(typeof ways)[number], { ms: number[], seconds: number, appends: number }>} */
const stats = { random: { ms: [], seconds: 0, appends: 0 }, idle: { ms: [], seconds: 0, appends: 0 } };
try {
  const q = await EmbeddedDigestQueue.open({ dir, partitions: o.partitions, logger, onFatal: (/** @type {Error} */ e) => { throw e; } });
  const payload = Buffer.alloc(o.bytes, 0x61);
  const draw = () => Math.floor(Math.random() * o.partitions);
  /** @param {(typeof ways)[number]} way */
  const pick = (way) => {
    let p = draw();
    for (let i = 1; way === 'idle' && i < 4 && q.busy(p); i++) p = draw();
    return p;
  };
  const disk = await fsyncProbe(dir);
  process.stderr.write(`queue-commit: ${o.appenders} appenders x ${o.appends} appends of ${o.bytes} bytes per round, ${o.partitions} partitions, ${o.rounds} rounds per way; fsync probe p50/p90 ${disk.p50Ms.toFixed(2)}/${disk.p90Ms.toFixed(2)} ms; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  for (let r = 0; r < o.rounds * 2; r++) {
    const way = ways[(r + Math.floor(r / 2)) % 2]; // random idle idle random random idle ...
    const s = stats[way];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: o.appenders }, async () => {
        for (let i = 0; i < o.appends; i++) {
          const a0 = performance.now();
          await q.append(pick(way), payload);
          s.ms.push(performance.now() - a0);
        }
      }),
    );
    s.seconds += (performance.now() - t0) / 1000;
    s.appends += o.appenders * o.appends;
    // Drop what this round wrote (as the digest's checkpoints would), so the disk use stays small.
    for (let p = 0; p < o.partitions; p++) await q.truncateBelow(p, q.endOffset(p));
  }
  await q.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
const q = (/** @type {number[]} */ xs, /** @type {number} */ f) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))] ?? 0;
for (const way of ways) {
  const s = stats[way];
  const mean = s.ms.reduce((a, b) => a + b, 0) / s.ms.length;
  process.stderr.write(`${way.padEnd(6)}: ${(s.appends / s.seconds).toFixed(1)} appends/s, latency mean ${mean.toFixed(2)} ms, p50 ${q(s.ms, 0.5).toFixed(2)}, p90 ${q(s.ms, 0.9).toFixed(2)}, p99 ${q(s.ms, 0.99).toFixed(2)}\n`);
}
process.stderr.write(`idle/random appends/s: ${(stats.idle.appends / stats.idle.seconds / (stats.random.appends / stats.random.seconds)).toFixed(3)}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
