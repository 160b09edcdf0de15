#!/usr/bin/env node
/**
 * Retention sweep while ingesting: fills a repository with `--mb` MB of raw events spread evenly
 * over the last 10 days (old data first), then measures, in one run on the same node, ingest
 * throughput for `--seconds` without a sweep (A) and for `--seconds` while time retention (5 days)
 * deletes the oldest half of the repository (B), and how long the sweep takes (from the
 * updateRetention mutation until the repository's segments are at half their bytes or less).
 *
 *   node bench/retention/run.mjs [--mb 300] [--seconds 20] [--connections 4]
 *
 * Prints one JSON object. Every server it starts binds 127.0.0.1 and is stopped by PID.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/logsvc', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(args[i + 1]);
};
const MB = opt('mb', 300);
const SECONDS = opt('seconds', 20);
const CONNECTIONS = opt('connections', 4);
const EVENTS_PER_BODY = 2000;
const DAY = 86_400_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (msg) => process.stderr.write(`[retention bench] ${msg}\n`);

function body(n, tsOf, host, seq) {
  const events = [];
  for (let i = 0; i < n; i++) {
    const k = seq + i;
    events.push({ timestamp: tsOf(i), rawstring: `192.168.${k % 250}.${k % 199} - user${k % 977} [bench] "GET /api/v1/items/${k % 10007}?page=${k % 13} HTTP/1.1" ${k % 17 === 0 ? 500 : 200} ${1000 + (k % 5000)} "agent/${k % 7}" seq=${k}`, attributes: { status: String(k % 17 === 0 ? 500 : 200), seq: String(k) } });
  }
  return JSON.stringify([{ tags: { host }, events }]);
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-bench-retention-'));
  const config = join(dir, 'config.toml');
  await writeFile(config, ['[node]', 'host = "127.0.0.1"', '[health]', 'grace_period_seconds = 3600', '[digest]', 'partitions = 2', 'flush_block_seconds = 2', 'block_target_bytes = 131072', 'blocks_per_segment = 4', '[retention]', 'interval_seconds = 1', ''].join('\n'));
  const proc = spawn(process.execPath, [BIN, 'node', '--port', '0', '--data-dir', join(dir, 'data'), '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', () => undefined);
  const stop = async () => {
    if (proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const t0 = Date.now();
    while (!/http:\/\/[\d.:]+/.test(out)) {
      if (Date.now() - t0 > 30_000 || proc.exitCode !== null) throw new Error('node did not start');
      await sleep(100);
    }
    const url = /http:\/\/[\d.:]+/.exec(out)[0];
    const admin = (await readFile(join(dir, 'data', 'local-admin-token.txt'), 'utf8')).trim();
    const gql = async (query, variables) => {
      const r = await fetch(`${url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      const j = await r.json();
      if (j.errors) throw new Error(JSON.stringify(j.errors));
      return j.data;
    };
    progress(`node at ${url}`);
    const repo = (await gql('mutation { createRepository(name: "bench") { repository { ingestTokens { token } } } }')).createRepository.repository;
    const token = repo.ingestTokens[0].token;
    const post = async (b) => {
      for (;;) {
        const r = await fetch(`${url}/api/v1/ingest/humio-structured`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: b });
        await r.arrayBuffer();
        if (r.status === 200) return;
        if (r.status !== 503 && r.status !== 429) throw new Error(`ingest ${r.status}`);
        await sleep(200);
      }
    };
    const size = async () => (await gql('{ repository(name: "bench") { compressedByteSize uncompressedByteSize } }')).repository;

    // Fill: old data first, timestamps rising evenly from 10 days ago to 1 minute ago.
    const sample = body(1, () => 0, 'fill', 0);
    const perEvent = sample.length - 40;
    const total = Math.ceil((MB * 1e6) / perEvent);
    let sent = 0;
    const fillStart = Date.now();
    const start = fillStart - 10 * DAY;
    const span = 10 * DAY - 60_000;
    const fillWorker = async () => {
      while (sent < total) {
        const seq = sent;
        const n = Math.min(EVENTS_PER_BODY, total - seq);
        sent += n;
        await post(body(n, (i) => start + Math.floor(((seq + i) / total) * span), `fill-${seq % 4}`, seq));
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, fillWorker));
    const fillMs = Date.now() - fillStart;
    progress(`filled ${total} events in ${fillMs} ms; waiting for the digest`);
    // Wait until the digest has written everything (sizes stop growing for 5 s).
    const waitStable = async () => {
      let last = -1;
      let stableSince = Date.now();
      for (;;) {
        const s = (await size()).compressedByteSize;
        if (s !== last) {
          last = s;
          stableSince = Date.now();
        } else if (Date.now() - stableSince > 5000) return;
        await sleep(500);
      }
    };
    await waitStable();
    const before = await size();

    // Ingest of new events for SECONDS; returns events/s.
    let liveSeq = 0;
    const ingestFor = async (label) => {
      const until = Date.now() + SECONDS * 1000;
      let events = 0;
      const acks = [];
      const worker = async () => {
        while (Date.now() < until) {
          const seq = liveSeq;
          liveSeq += EVENTS_PER_BODY;
          await post(body(EVENTS_PER_BODY, () => Date.now(), `live-${label}`, 10_000_000 + seq));
          events += EVENTS_PER_BODY;
          acks.push(Date.now());
        }
      };
      const t = Date.now();
      await Promise.all(Array.from({ length: CONNECTIONS }, worker));
      return { events, seconds: (Date.now() - t) / 1000, eventsPerSecond: Math.round(events / ((Date.now() - t) / 1000)), acks };
    };

    progress(`digested: ${JSON.stringify(before)}; ingest without a sweep`);
    // A runs with the same query polling as B's sweep watch, so the two differ only by the sweep.
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await fetch(`${url}/api/v1/repositories/bench/query`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ queryString: 'count()', start: Date.now() - 11 * DAY, end: Date.now() - 6 * DAY }) }).then((r) => r.arrayBuffer());
        await sleep(50);
      }
    })();
    const a = await ingestFor('a');
    polling = false;
    await poller;
    progress(`A: ${a.eventsPerSecond} events/s; ingest during the sweep`);
    await waitStable();
    // B: the sweep of everything older than 5 days (about half of the filled data) while ingesting.
    let sweepStart = Date.now();
    let sweepMs = null;
    // Done when no fill event a day past the new limit is left (a count over [11 d, 6 d) ago): whole segments go, so the one spanning 5 days ago stays.
    const oldCount = async () => {
      const r = await fetch(`${url}/api/v1/repositories/bench/query`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ queryString: 'count()', start: sweepStart - 11 * DAY, end: sweepStart - 6 * DAY }) });
      return Number((await r.json())[0]._count);
    };
    const oldBefore = await oldCount();
    // Done at the last change of that count once it has dropped and stayed put for 3 s: segments
    // holding newer events too (ingest order is not quite time order) stay, so it need not reach 0.
    let oldLeft = oldBefore;
    const watch = (async () => {
      let lastChange = Date.now();
      while (Date.now() - sweepStart < 600_000) {
        const n = await oldCount();
        if (n !== oldLeft) {
          oldLeft = n;
          lastChange = Date.now();
        } else if (oldLeft < oldBefore && Date.now() - lastChange > 3000) {
          sweepMs = lastChange - sweepStart;
          return;
        }
        await sleep(50);
      }
    })();
    sweepStart = Date.now();
    await gql('mutation { updateRetention(repositoryName: "bench", timeBasedRetention: 5) { __typename } }');
    const b = await ingestFor('b');
    await watch;
    const after = await size();
    // Events acknowledged while the sweep ran (bodies completing inside its window), per second.
    const during = sweepMs === null ? null : b.acks.filter((x) => x >= sweepStart && x <= sweepStart + sweepMs).length * EVENTS_PER_BODY / Math.max(sweepMs / 1000, 0.001);
    delete a.acks;
    delete b.acks;
    console.log(
      JSON.stringify(
        {
          filledMB: MB,
          filledEvents: total,
          fillSeconds: fillMs / 1000,
          segmentBytesBefore: before.compressedByteSize,
          uncompressedBytesBefore: before.uncompressedByteSize,
          segmentBytesAfter: after.compressedByteSize,
          oldEventsBefore: oldBefore,
          oldEventsLeft: oldLeft,
          sweepSeconds: sweepMs === null ? null : sweepMs / 1000,
          ingestWithoutSweep: a,
          ingestDuringSweep: b,
          ingestInsideSweepWindowEventsPerSecond: during === null ? null : Math.round(during),
          ratio: Number((b.eventsPerSecond / a.eventsPerSecond).toFixed(3)),
          ratioInsideSweepWindow: during === null ? null : Number((during / a.eventsPerSecond).toFixed(3)),
        },
        null,
        2,
      ),
    );
  } finally {
    await stop();
  }
}

await main();
