/**
 * Cluster RPC over loopback between two processes (this one and a forked responder), on the built
 * module (dist/): unary request rate and latency at a given concurrency, unary answers of 64 KiB,
 * and streamed 64 KiB chunks (credit window 16). Every answer is checked.
 *
 *   node bench/cluster/rpc.mjs [--seconds 5] [--concurrency 64]
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Membership } from '../../dist/cluster/index.js';
import { systemClock } from '../../dist/lib/clock.js';
import { silentLogger } from '../../dist/lib/logger.js';
import { describeBuild, distBuild } from '../lib/build.mjs';
import { percentile, Samples } from '../lib/stats.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const KIB64 = Buffer.alloc(64 * 1024, 7);

function member(id, peers) {
  return new Membership({
    selfId: id, selfUuid: randomUUID(), clusterId: 'bench', uri: `http://127.0.0.1:${id}`, listen: { host: '127.0.0.1', port: 0 },
    peers, heartbeatIntervalMs: 500, failureTimeoutMs: 5000, logger: silentLogger, clock: systemClock, requestTimeoutMs: 30_000,
  });
}

if (process.argv[2] === '--responder') {
  const m = member(2, []);
  m.handle('echo', (body) => body);
  m.handle('blob', () => KIB64);
  m.handleStream('blobs', async function* blobs(n) {
    for (let i = 0; i < n; i++) yield KIB64;
  });
  const { advertise } = await m.start();
  process.send({ addr: advertise });
  process.on('disconnect', () => process.exit(0));
} else {
  const seconds = arg('seconds', 5);
  const concurrency = arg('concurrency', 64);
  const build = await distBuild();
  console.log(`node bench/cluster/rpc.mjs --seconds ${seconds} --concurrency ${concurrency}`);
  console.log(`${describeBuild(build)}; ${availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}`);
  const child = fork(new URL(import.meta.url).pathname, ['--responder'], { stdio: 'inherit' });
  const { addr } = await new Promise((resolve) => child.once('message', resolve));
  const m = member(1, [addr]);
  await m.start();
  while (!m.isAlive(2)) await new Promise((r) => setTimeout(r, 10));

  const unary = async (type, body, check) => {
    const lat = new Samples();
    let n = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await m.request(2, type, body);
        lat.add(performance.now() - t0);
        if (!check(r)) throw new Error(`wrong answer to ${type}`);
        n++;
      }
    }));
    const s = lat.sorted();
    return { perSec: n / seconds, p50: percentile(s, 50), p99: percentile(s, 99) };
  };
  const small = await unary('echo', { i: 1, s: 'abc' }, (r) => r.i === 1);
  console.log(`unary echo (small):  ${Math.round(small.perSec)} req/s, p50 ${small.p50.toFixed(2)} ms, p99 ${small.p99.toFixed(2)} ms`);
  const big = await unary('blob', null, (r) => r.length === KIB64.length);
  console.log(`unary 64 KiB answer: ${Math.round(big.perSec)} req/s = ${((big.perSec * 64) / 1024).toFixed(0)} MiB/s, p50 ${big.p50.toFixed(2)} ms, p99 ${big.p99.toFixed(2)} ms`);
  let chunks = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    for await (const c of m.stream(2, 'blobs', 1000, { window: 16 })) {
      if (c.length !== KIB64.length) throw new Error('wrong chunk');
      chunks++;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(`stream 64 KiB chunks (window 16): ${Math.round(chunks / secs)} chunks/s = ${((chunks * 64) / 1024 / secs).toFixed(0)} MiB/s`);
  await m.stop();
  child.disconnect();
}
