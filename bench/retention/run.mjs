#!/usr/bin/env node
/**
 * Retention sweep while ingesting. One node; `--repos` repositories are each filled with `--mb` MB
 * of raw events whose timestamps rise evenly from 10 days ago to 1 minute ago (old data first).
 * Then, alternating on the same node:
 *
 *   A1  ingest for --seconds, no sweep                     (into repository 1)
 *   B1  ingest for --seconds, while time retention (5 days) deletes the oldest half of repository 1
 *   A2  ingest for --seconds, no sweep                     (into repository 2)
 *   B2  the same sweep over repository 2
 *   ...
 *   A<n+1>
 *
 * B lasts at least until its sweep is done. The sweep runs from the updateRetention mutation until
 * `<data>/segments/deletions.json` lists no pending path in a read begun after the decision (the
 * node's `retention deleted segments` log line, or a read that saw pending paths): every file of
 * the decision unlinked and the directory synced. That manifest is read every 50 ms in every
 * phase, A included, so the phases differ only by the sweep. Ingest: `--connections` connections
 * posting 2,000-event bodies of new events. For each phase: events/s, and node CPU (user + system,
 * all threads, /proc). For each sweep: its time, and events/s acknowledged inside the sweep's own
 * window, against the A phases cut into windows of the same length (median and lowest).
 *
 *   node bench/retention/run.mjs [--mb 2000] [--repos 2] [--seconds 20] [--connections 4] [--cpu-prof DIR]
 *
 * Prints progress on stderr and one JSON object on stdout. The node binds 127.0.0.1:0; it and its
 * temp dir are removed at the end (Ctrl-C included), the node by its PID.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { cleanupAll, cleanupSync, makeTempDir, readCpuSeconds, startLogsvcNode, storedSegmentBytes } from '../lib/processes.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(args[i + 1]);
};
const MB = opt('mb', 2000);
const REPOS = opt('repos', 2);
const SECONDS = opt('seconds', 20);
const CONNECTIONS = opt('connections', 4);
const CPU_PROF = args.includes('--cpu-prof') ? args[args.indexOf('--cpu-prof') + 1] : null;
const EVENTS_PER_BODY = 2000;
const DAY = 86_400_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (msg) => process.stderr.write(`[retention bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const load = () => loadavg().map((x) => Number(x.toFixed(1)));

function body(n, tsOf, host, seq) {
  const events = [];
  for (let i = 0; i < n; i++) {
    const k = seq + i;
    events.push({ timestamp: tsOf(i), rawstring: `192.168.${k % 250}.${k % 199} - user${k % 977} [bench] "GET /api/v1/items/${k % 10007}?page=${k % 13} HTTP/1.1" ${k % 17 === 0 ? 500 : 200} ${1000 + (k % 5000)} "agent/${k % 7}" seq=${k}`, attributes: { status: String(k % 17 === 0 ? 500 : 200), seq: String(k) } });
  }
  return JSON.stringify([{ tags: { host }, events }]);
}

async function main() {
  const root = await makeTempDir('logsvc-bench-retention-');
  const config = ['[health]', 'grace_period_seconds = 3600', '[digest]', 'partitions = 2', 'flush_block_seconds = 2', 'block_target_bytes = 131072', 'blocks_per_segment = 4', '[retention]', 'interval_seconds = 1', ''].join('\n');
  const { server, dataDir, adminToken } = await startLogsvcNode({ rootDir: root, config, nodeFlags: CPU_PROF === null ? [] : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] });
  const url = server.url;
  const manifest = join(dataDir, 'segments', 'deletions.json');
  const gql = async (query, variables) => {
    const r = await fetch(`${url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const j = await r.json();
    if (j.errors) throw new Error(JSON.stringify(j.errors));
    return j.data;
  };
  const loadAtStart = load();
  progress(`node at ${url}, pid ${server.pid}; load ${loadAtStart.join(' ')}`);
  const tokens = [];
  for (let r = 1; r <= REPOS; r++) {
    const repo = (await gql(`mutation { createRepository(name: "bench${r}") { repository { ingestTokens { token } } } }`)).createRepository.repository;
    tokens.push(repo.ingestTokens[0].token);
  }
  const post = async (token, b) => {
    for (;;) {
      const r = await fetch(`${url}/api/v1/ingest/humio-structured`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: b });
      await r.arrayBuffer();
      if (r.status === 200) return;
      if (r.status !== 503 && r.status !== 429) throw new Error(`ingest ${r.status}`);
      await sleep(200);
    }
  };
  const size = async (r) => (await gql(`{ repository(name: "bench${r}") { compressedByteSize uncompressedByteSize } }`)).repository;

  // Fill every repository: old data first, timestamps rising evenly from 10 days ago to 1 minute ago.
  const perEvent = body(1, () => 0, 'fill', 0).length - 40;
  const total = Math.ceil((MB * 1e6) / perEvent);
  const fillStart = Date.now();
  const start = fillStart - 10 * DAY;
  const span = 10 * DAY - 60_000;
  for (let r = 1; r <= REPOS; r++) {
    let sent = 0;
    const t0 = Date.now();
    const fillWorker = async () => {
      while (sent < total) {
        const seq = sent;
        const n = Math.min(EVENTS_PER_BODY, total - seq);
        sent += n;
        // Four hosts (datasources), body by body, so both partitions' digests take part.
        await post(tokens[r - 1], body(n, (i) => start + Math.floor(((seq + i) / total) * span), `fill-${(seq / EVENTS_PER_BODY) % 4}`, seq));
        if (seq % 1_000_000 < EVENTS_PER_BODY) progress(`bench${r}: ${seq} of ${total} events sent; load ${load().join(' ')}`);
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, fillWorker));
    progress(`bench${r}: filled ${total} events in ${(Date.now() - t0) / 1000} s`);
  }
  const fillMs = Date.now() - fillStart;
  // Until the digest has written everything: every repository's size unchanged for 5 s.
  const waitStable = async () => {
    let last = '';
    let stableSince = Date.now();
    for (;;) {
      const s = JSON.stringify(await Promise.all(Array.from({ length: REPOS }, (_, i) => size(i + 1))));
      if (s !== last) {
        last = s;
        stableSince = Date.now();
      } else if (Date.now() - stableSince > 5000) return;
      await sleep(500);
    }
  };
  await waitStable();
  const stored = await storedSegmentBytes(dataDir);
  progress(`digested: ${stored.files} segment files, ${stored.bytes} bytes`);

  // When a sweep is decided: the node logs `retention deleted segments` (on stderr) once the manifest
  // lists the doomed paths and the catalog has dropped them; or a manifest read sees pending paths.
  // It is done at the first manifest read, begun after the decision was known, that lists none: the
  // manifest is rewritten without them only after every file is unlinked and its directory synced.
  // A fast sweep can list and empty the manifest between two reads; the log line still tells it.
  const watch = { decidedAt: null, decidedSegments: null, decidedBytes: null, emptiedAt: null };
  let logTail = '';
  server.proc.stderr?.on('data', (/** @type {Buffer} */ d) => {
    const lines = (logTail + d.toString()).split('\n');
    logTail = /** @type {string} */ (lines.pop());
    for (const line of lines) {
      const m = /retention deleted segments.*?segments=(\d+) bytes=(\d+)/.exec(line);
      if (m !== null) {
        watch.decidedAt ??= Date.now();
        watch.decidedSegments = (watch.decidedSegments ?? 0) + Number(m[1]);
        watch.decidedBytes = (watch.decidedBytes ?? 0) + Number(m[2]);
      }
    }
  });
  // The manifest is read every 50 ms in every phase, A included, so the phases differ only by the sweep.
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const readStart = Date.now();
      try {
        const m = JSON.parse(await readFile(manifest, 'utf8'));
        const n = m.pending.length;
        if (n > 0 && watch.decidedAt === null) watch.decidedAt = Date.now();
        // Only a read begun after the decision counts (one begun before it, or before the previous
        // sweep's state was reset, may still see the manifest of before).
        if (n === 0 && watch.decidedAt !== null && readStart > watch.decidedAt && watch.emptiedAt === null) watch.emptiedAt = Date.now();
      } catch {
        // not written yet, or replaced between open and read
      }
      await sleep(50);
    }
  })();

  // Ingest of new events for at least `seconds` (and until `until()` says so): acknowledgement times, CPU.
  let liveSeq = 0;
  const ingestFor = async (label, token, until = () => true) => {
    const end = Date.now() + SECONDS * 1000;
    const acks = [];
    const cpu0 = await readCpuSeconds(server.pid);
    const t = Date.now();
    const worker = async () => {
      while (Date.now() < end || !until()) {
        const seq = liveSeq;
        liveSeq += EVENTS_PER_BODY;
        await post(token, body(EVENTS_PER_BODY, () => Date.now(), `live-${label}`, 100_000_000 + seq));
        acks.push(Date.now());
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
    const seconds = (Date.now() - t) / 1000;
    const cpu1 = await readCpuSeconds(server.pid);
    const events = acks.length * EVENTS_PER_BODY;
    return { label, from: t, seconds, events, eventsPerSecond: Math.round(events / seconds), cpuSeconds: cpu0 === null || cpu1 === null ? null : Number((cpu1 - cpu0).toFixed(2)), load: load(), acks };
  };

  const phases = [];
  const sweeps = [];
  for (let r = 1; r <= REPOS + 1; r++) {
    const token = tokens[Math.min(r, REPOS) - 1];
    const a = await ingestFor(`A${r}`, token);
    progress(`A${r}: ${a.eventsPerSecond} events/s, CPU ${a.cpuSeconds} s; load ${a.load.join(' ')}`);
    phases.push(a);
    if (r > REPOS) break;
    await waitStable();
    const before = await size(r);
    watch.decidedAt = null;
    watch.decidedSegments = null;
    watch.decidedBytes = null;
    watch.emptiedAt = null;
    const sweepStart = Date.now();
    await gql(`mutation { updateRetention(repositoryName: "bench${r}", timeBasedRetention: 5) { __typename } }`);
    // Until the sweep is done; given up after 10 min, or after 60 s without a decision.
    const b = await ingestFor(`B${r}`, token, () => watch.emptiedAt !== null || Date.now() - sweepStart > 600_000 || (watch.decidedAt === null && Date.now() - sweepStart > 60_000));
    phases.push(b);
    await waitStable();
    const after = await size(r);
    const sweepMs = watch.emptiedAt === null ? null : watch.emptiedAt - sweepStart;
    const inWindow = sweepMs === null ? null : b.acks.filter((x) => x > sweepStart && x <= watch.emptiedAt).length * EVENTS_PER_BODY;
    const sweep = {
      repository: `bench${r}`,
      seconds: sweepMs === null ? null : sweepMs / 1000,
      decidedAfterSeconds: watch.decidedAt === null ? null : (watch.decidedAt - sweepStart) / 1000,
      // What the node logged deciding (segments and their stored bytes).
      segmentsDeleted: watch.decidedSegments,
      segmentBytesDeleted: watch.decidedBytes,
      repositoryBytesBefore: before.compressedByteSize,
      // Once B's own events are digested too: before - deleted + what B ingested.
      repositoryBytesAfter: after.compressedByteSize,
      insideWindowEventsPerSecond: inWindow === null ? null : Math.round(inWindow / (sweepMs / 1000)),
    };
    sweeps.push(sweep);
    progress(`B${r}: ${b.eventsPerSecond} events/s, CPU ${b.cpuSeconds} s; sweep ${JSON.stringify(sweep)}; load ${b.load.join(' ')}`);
  }
  watching = false;
  await watcher;

  // The A phases cut into windows of the sweep's length: what the sweep window's rate compares with.
  const windowsOf = (ms) => {
    const rates = [];
    for (const a of phases.filter((p) => p.label.startsWith('A'))) {
      for (let w = a.from; w + ms <= a.from + a.seconds * 1000; w += ms) rates.push((a.acks.filter((x) => x > w && x <= w + ms).length * EVENTS_PER_BODY) / (ms / 1000));
    }
    rates.sort((x, y) => x - y);
    return rates.length === 0 ? null : { windows: rates.length, median: Math.round(rates[rates.length >> 1]), lowest: Math.round(rates[0]) };
  };
  const aRate = (() => {
    const as = phases.filter((p) => p.label.startsWith('A'));
    return as.reduce((n, p) => n + p.events, 0) / as.reduce((n, p) => n + p.seconds, 0);
  })();
  const bRate = (() => {
    const bs = phases.filter((p) => p.label.startsWith('B'));
    return bs.reduce((n, p) => n + p.events, 0) / bs.reduce((n, p) => n + p.seconds, 0);
  })();
  // The load drifts over a run (other work on the machine, the node warming up): the A phases just
  // before and after each sweep are its closest yardstick.
  const rateOf = (label) => phases.find((p) => p.label === label)?.eventsPerSecond ?? null;
  for (const [i, s] of sweeps.entries()) {
    const around = [rateOf(`A${i + 1}`), rateOf(`A${i + 2}`)].filter((x) => x !== null);
    const aroundRate = around.reduce((n, x) => n + x, 0) / around.length;
    s.insideWindowVsAdjacentA = s.insideWindowEventsPerSecond === null || around.length === 0 ? null : Number((s.insideWindowEventsPerSecond / aroundRate).toFixed(3));
    // B after its sweep (ingest alone, like A): the rest of the phase.
    const bPhase = phases.find((p) => p.label === `B${i + 1}`);
    const rest = s.seconds === null || bPhase === undefined ? 0 : bPhase.seconds - s.seconds;
    s.restOfBEventsPerSecond = rest < 1 ? null : Math.round((bPhase.events - s.insideWindowEventsPerSecond * s.seconds) / rest);
    s.aWindowsOfSameLength = s.seconds === null ? null : windowsOf(Math.max(250, s.seconds * 1000));
    // The sweep window is always B's first seconds, and a phase's first seconds run faster (it
    // starts after an idle wait, with the digest caught up): the A phases' first windows of the same length.
    s.aFirstWindowsEventsPerSecond = s.seconds === null ? null : phases.filter((p) => p.label.startsWith('A')).map((a) => Math.round((a.acks.filter((x) => x <= a.from + s.seconds * 1000).length * EVENTS_PER_BODY) / s.seconds));
    s.insideWindowVsA = s.insideWindowEventsPerSecond === null ? null : Number((s.insideWindowEventsPerSecond / aRate).toFixed(3));
  }
  for (const p of phases) {
    p.cpuSecondsPerMillionEvents = p.cpuSeconds === null ? null : Number(((p.cpuSeconds / p.events) * 1e6).toFixed(2));
    delete p.acks;
    delete p.from;
  }
  console.log(
    JSON.stringify(
      {
        cpus: availableParallelism(),
        loadAverage: { atStart: loadAtStart, atEnd: load() },
        mbPerRepository: MB,
        eventsPerRepository: total,
        repositories: REPOS,
        fillSeconds: fillMs / 1000,
        segmentFiles: stored.files,
        segmentBytes: stored.bytes,
        phases,
        sweeps,
        ingestAEventsPerSecond: Math.round(aRate),
        ingestBEventsPerSecond: Math.round(bRate),
        ratioBtoA: Number((bRate / aRate).toFixed(3)),
      },
      null,
      2,
    ),
  );
}

process.once('SIGINT', () => void cleanupAll().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanupAll().then(() => process.exit(143)));
process.once('exit', cleanupSync);
try {
  await main();
} finally {
  await cleanupAll();
}
