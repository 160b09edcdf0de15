#!/usr/bin/env node
/**
 * Segment replication benchmark, side by side in one run on this machine (docs/replication.md):
 *
 *  1. the cost to ingest: the same load (bench/ingest/run.mjs, --target node) against a three-node
 *     cluster with segment_replication_factor 1 and one with factor 2 (same broker), alternating
 *     `--rounds` times: events/s, ack p99, and the replication bytes each node received per second
 *     of ingest; the factor-2/factor-1 ratio per round and over all rounds;
 *  2. re-replication: in the factor-2 cluster node 3 is stopped, more is ingested, node 3 is started
 *     again; the time until every segment is held by two nodes again, and the MB/s node 3 copied.
 *
 * Everything runs on 127.0.0.1 and is stopped by PID. Usage:
 *   node bench/cluster/replication.mjs [--seconds 15] [--dataset accesslog] [--rounds 1]
 *     [--bytes-per-second N] [--outbound-bytes-per-second N]
 */
import { cleanupAll, makeTempDir, startLogsvcNode } from '../lib/processes.mjs';
import { api, clusterToml, createRepo, freePort, ingestBench, option, sleep, startBenchBroker, summary } from '../lib/cluster.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => option(args, name, dflt);
if (args.includes('--help')) {
  console.log('usage: node bench/cluster/replication.mjs [--seconds 15] [--dataset accesslog] [--rounds 1] [--bytes-per-second N] [--outbound-bytes-per-second N]');
  process.exit(0);
}
const SECONDS = Number(opt('seconds', '15'));
const DATASET = opt('dataset', 'accesslog');
const RATE = Number(opt('bytes-per-second', String(100 * 1024 * 1024)));
const OUT_RATE = Number(opt('outbound-bytes-per-second', String(100 * 1024 * 1024)));
const ROUNDS = Number(opt('rounds', '1'));
const FAILURE_MS = 2000;

async function replication(node) {
  const r = await api(node.server.url, '/api/v1/clusterconfig/segments', node.adminToken);
  if (r.status !== 200) throw new Error(`segments: ${r.status} ${r.text.slice(0, 200)}`);
  return JSON.parse(r.text);
}

/** Waits until `node` sees every segment held by the factor and no copy under way anywhere it knows. */
async function fullyReplicated(nodes, timeoutMs) {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const rs = await Promise.all(nodes.map((n) => replication(n).catch(() => null)));
    if (rs.every((r) => r !== null && r.underReplicated === 0 && r.pendingOwn === 0 && r.active === 0 && r.queued === 0)) return { ms: performance.now() - t0, rs };
    await sleep(100);
  }
  throw new Error(`not fully replicated within ${timeoutMs} ms`);
}

async function startCluster(brokers, prefix, factor) {
  const ports = [await freePort(), await freePort(), await freePort()];
  const extra = `segment_replication_factor = ${factor}\nreplication_bytes_per_second = ${RATE}\nreplication_outbound_bytes_per_second = ${OUT_RATE}`;
  const tomls = ports.map((p, i) => clusterToml(i + 1, brokers, prefix, p, ports.filter((x) => x !== p), FAILURE_MS, extra));
  const dirs = [];
  for (let i = 0; i < 3; i++) dirs.push(await makeTempDir(`logsvc-bench-repl-${factor}-${i + 1}-`));
  const nodes = await Promise.all(dirs.map((d, i) => startLogsvcNode({ rootDir: d, config: tomls[i], nodeFlags: [] })));
  await sleep(FAILURE_MS * 3);
  return { nodes, dirs, tomls };
}

/** One load against a fresh three-node cluster with `factor`: the ingest figures and the cluster, still running. */
async function ingestRun(brokers, round, factor, o) {
  const c = await startCluster(brokers, `r${round}f${factor}-`, factor);
  const [a] = c.nodes;
  const token = await createRepo(a.server.url, a.adminToken, 'bench');
  const t0 = performance.now();
  const s = summary(await ingestBench(a.server.url, token, [], o));
  const settled = await fullyReplicated(c.nodes, 300_000);
  const seconds = (performance.now() - t0) / 1000;
  const received = settled.rs.map((r) => r.bytesReceived);
  const figures = {
    ...s,
    segmentBytesPerNode: settled.rs[0].nodes.map((n) => n.bytes),
    replicationMBReceivedPerNode: received.map((b) => +(b / 1048576).toFixed(1)),
    replicationMBpsPerNode: received.map((b) => +(b / 1048576 / seconds).toFixed(2)),
    settledAfterIngestMs: Math.round(settled.ms),
  };
  console.log(JSON.stringify({ round, factor, ...figures }));
  return { c, token, figures };
}

async function main() {
  const root = await makeTempDir('logsvc-bench-repl-');
  const broker = await startBenchBroker(root);
  const brokers = broker.brokers;
  const result = { date: new Date().toISOString(), dataset: DATASET, seconds: SECONDS, rounds: ROUNDS, replicationBytesPerSecond: RATE, outboundBytesPerSecond: OUT_RATE };
  const o = { dataset: DATASET, seconds: SECONDS };
  try {
    // 1. Factor 1 and factor 2, the same load, one after the other on the same broker, `ROUNDS` times.
    result.ingest = {};
    result.perRound = [];
    let last = null;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const factor of [1, 2]) {
        const run = await ingestRun(brokers, round, factor, o);
        result.ingest[`factor${factor}`] = run.figures;
        if (factor === 2 && round === ROUNDS) last = run;
        else for (const n of run.c.nodes) await n.server.stop(15_000);
      }
      const [f1, f2] = [result.ingest.factor1.eventsPerSec, result.ingest.factor2.eventsPerSec];
      result.perRound.push({ round, factor1: f1, factor2: f2, ratio: +(f2 / f1).toFixed(2) });
    }
    const sum = (k) => result.perRound.reduce((a, r) => a + r[k], 0);
    result.factor2ShareOfFactor1 = +(sum('factor2') / sum('factor1')).toFixed(2);

    // 2. Re-replication, in the last factor-2 cluster: node 3 misses a second load, then comes back.
    const { c, token } = last;
    const [a] = c.nodes;
    await c.nodes[2].server.stop(15_000);
    await sleep(FAILURE_MS * 2);
    await ingestBench(a.server.url, token, [], o);
    await sleep(3000);
    const before = await replication(a);
    const restartAt = performance.now();
    c.nodes[2] = await startLogsvcNode({ rootDir: c.dirs[2], config: c.tomls[2], nodeFlags: [] });
    const readyMs = performance.now() - restartAt;
    const back = await fullyReplicated(c.nodes, 600_000);
    const ms = performance.now() - restartAt;
    const copied = back.rs[2].bytesReceived;
    result.rereplication = {
      underReplicatedBefore: before.underReplicated,
      secondsFromRestart: +(ms / 1000).toFixed(1),
      secondsToReady: +(readyMs / 1000).toFixed(1),
      mbCopiedToNode3: +(copied / 1048576).toFixed(1),
      mbPerSecond: +(copied / 1048576 / (ms / 1000)).toFixed(2),
    };
    console.log(JSON.stringify({ rereplication: result.rereplication }));
    for (const n of c.nodes) await n.server.stop(15_000);
  } finally {
    await cleanupAll();
    await broker.stop();
  }
  console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
