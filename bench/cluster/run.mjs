#!/usr/bin/env node
/**
 * Cluster benchmark, side by side in one run on this machine:
 *
 *  1. ingest: the same load (bench/ingest/run.mjs, --target node) against a node on the embedded
 *     queue and a one-node cluster on a local KRaft broker: events/s and ack p50/p99, then each at
 *     half of its own maximum (ack p99 at half load);
 *  2. three nodes on the broker: failover time (owner killed with SIGKILL -> every partition has a
 *     live owner again), handover time (restarted node ready -> it owns its partitions again) and the
 *     worst event latency (ingest accepted -> searchable) through the restart and handover;
 *  3. the cost of a fanned-out query: the same queries on the three-node cluster and on the
 *     embedded node holding the same events.
 *
 * Everything runs on 127.0.0.1 and is stopped by PID. Usage:
 *   node bench/cluster/run.mjs [--seconds 15] [--dataset accesslog]
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { cleanupAll, makeTempDir, startLogsvcNode } from '../lib/processes.mjs';
import { api, clusterToml as toml, createRepo, freePort, ingestBench as ingestRun, option, sleep, startBenchBroker, summary } from '../lib/cluster.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => option(args, name, dflt);
if (args.includes('--help')) {
  console.log('usage: node bench/cluster/run.mjs [--seconds 15] [--dataset accesslog]');
  process.exit(0);
}
const SECONDS = Number(opt('seconds', '15'));
const DATASET = opt('dataset', 'accesslog');
const FAILURE_MS = 2000;
const ingestBench = (url, token, extra) => ingestRun(url, token, extra, { dataset: DATASET, seconds: SECONDS });
const clusterToml = (id, brokers, prefix, port, peers) => toml(id, brokers, prefix, port, peers, FAILURE_MS);

/** Every event, whatever its timestamp (the datasets' clocks are their own). */
const ALL_TIME = () => ({ start: 0, end: Date.now() + 365 * 86_400_000 });

async function countOf(url, token, repo, q = 'count()') {
  const r = await api(url, `/api/v1/repositories/${repo}/query`, token, { queryString: q, ...ALL_TIME() });
  if (r.status !== 200) throw new Error(`${q}: ${r.status} ${r.text.slice(0, 200)}`);
  return Number(JSON.parse(r.text)[0]?._count ?? NaN);
}

async function timeQuery(url, token, repo, q) {
  await api(url, `/api/v1/repositories/${repo}/query`, token, { queryString: q, ...ALL_TIME() });
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = await api(url, `/api/v1/repositories/${repo}/query`, token, { queryString: q, ...ALL_TIME() });
    if (r.status !== 200) throw new Error(`${q}: ${r.status} ${r.text}`);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[2];
}

async function owners(url, token) {
  const r = await api(url, '/api/v1/clusterconfig/digest', token);
  const o = /** @type {{partition: number, hosts: number[], owner: number | null}[]} */ (JSON.parse(r.text));
  if (r.status !== 200 || !Array.isArray(o) || o.length === 0) throw new Error(`digest owners: ${r.status} ${r.text.slice(0, 200)}`);
  return o;
}

/** Waits until every partition is digested by its first host (the settled state). */
async function settled(url, token, timeoutMs) {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if ((await owners(url, token)).every((p) => p.owner === p.hosts[0])) return performance.now() - t0;
    await sleep(50);
  }
  throw new Error(`partitions not with their first hosts within ${timeoutMs} ms: ${JSON.stringify(await owners(url, token))}`);
}

async function main() {
  const root = await makeTempDir('logsvc-bench-cluster-');
  const broker = await startBenchBroker(root);
  const brokers = broker.brokers;
  const result = { date: new Date().toISOString(), dataset: DATASET, seconds: SECONDS };
  try {
    // 1. Ingest: embedded vs Kafka, same load.
    const emb = await startLogsvcNode({ rootDir: await makeTempDir('logsvc-bench-emb-'), config: '', nodeFlags: [] });
    const embToken = await createRepo(emb.server.url, emb.adminToken, 'bench');
    const embMax = summary(await ingestBench(emb.server.url, embToken, []));
    const kport1 = await freePort();
    const kn = await startLogsvcNode({ rootDir: await makeTempDir('logsvc-bench-kafka-'), config: clusterToml(1, brokers, 'one-', kport1, []), nodeFlags: [] });
    await sleep(FAILURE_MS + 1000);
    const knToken = await createRepo(kn.server.url, kn.adminToken, 'bench');
    const kMax = summary(await ingestBench(kn.server.url, knToken, []));
    const embHalf = summary(await ingestBench(emb.server.url, embToken, ['--rate', String(Math.round(embMax.eventsPerSec / 2))]));
    const kHalf = summary(await ingestBench(kn.server.url, knToken, ['--rate', String(Math.round(kMax.eventsPerSec / 2))]));
    result.ingest = { embedded: { max: embMax, half: embHalf }, kafka: { max: kMax, half: kHalf }, kafkaShareOfEmbedded: kMax.eventsPerSec / embMax.eventsPerSec };
    console.log(JSON.stringify({ ingest: result.ingest }));
    await kn.server.stop(15_000);

    // 2. Three nodes: failover, handover, latency.
    const ports = [await freePort(), await freePort(), await freePort()];
    const dirs = [await makeTempDir('logsvc-bench-c1-'), await makeTempDir('logsvc-bench-c2-'), await makeTempDir('logsvc-bench-c3-')];
    const tomls = ports.map((p, i) => clusterToml(i + 1, brokers, 'three-', p, ports.filter((x) => x !== p)));
    const nodes = await Promise.all(dirs.map((d, i) => startLogsvcNode({ rootDir: d, config: tomls[i], nodeFlags: [] })));
    await sleep(FAILURE_MS * 3);
    const [a] = nodes;
    const token = await createRepo(a.server.url, a.adminToken, 'bench');
    await settled(a.server.url, a.adminToken, 60_000);
    // The same events as the embedded node got, for the query comparison.
    await ingestBench(a.server.url, token, []);
    const killAt = performance.now();
    nodes[1].server.proc.kill('SIGKILL');
    let failoverMs = NaN;
    while (performance.now() - killAt < 60_000) {
      const o = await owners(a.server.url, a.adminToken);
      if (o.every((p) => p.owner !== null && p.owner !== 2)) {
        failoverMs = performance.now() - killAt;
        break;
      }
      await sleep(50);
    }
    // Restart node 2 while probes measure event latency.
    const latencies = [];
    let probing = true;
    const probe = (async () => {
      for (let i = 0; probing; i++) {
        const tag = `probe${i}x${Date.now()}`;
        const t0 = performance.now();
        await api(a.server.url, '/api/v1/ingest/humio-structured', token, [{ tags: { probe: 'yes' }, events: [{ timestamp: Date.now(), rawstring: tag }] }]);
        while ((await countOf(a.server.url, a.adminToken, 'bench', `${tag} | count()`)) < 1 && performance.now() - t0 < 60_000) await sleep(50);
        latencies.push(performance.now() - t0);
        await sleep(200);
      }
    })();
    const restartAt = performance.now();
    await writeFile(join(dirs[1], 'again.toml'), tomls[1]);
    nodes[1] = await startLogsvcNode({ rootDir: dirs[1], config: tomls[1], nodeFlags: [] });
    const readyAt = performance.now();
    const handoverMs = await settled(a.server.url, a.adminToken, 60_000);
    await sleep(2000);
    probing = false;
    await probe;
    result.cluster = {
      failureTimeoutMs: FAILURE_MS,
      failoverMs: Math.round(failoverMs),
      failoverAfterTimeoutMs: Math.round(failoverMs - FAILURE_MS),
      restartToReadyMs: Math.round(readyAt - restartAt),
      handoverMs: Math.round(handoverMs),
      eventLatencyDuringHandoverMaxMs: Math.round(Math.max(...latencies)),
      probes: latencies.length,
    };
    console.log(JSON.stringify({ cluster: result.cluster }));

    // 3. Fanned-out queries vs one node (per million events counted).
    const queries = ['count()', 'groupBy(statuscode)', 'GET | count()'];
    const perQuery = {};
    const clusterEvents = await countOf(a.server.url, a.adminToken, 'bench');
    const embEvents = await countOf(emb.server.url, emb.adminToken, 'bench');
    for (const q of queries) {
      const c = await timeQuery(a.server.url, a.adminToken, 'bench', q);
      const e = await timeQuery(emb.server.url, emb.adminToken, 'bench', q);
      perQuery[q] = { clusterMs: Math.round(c), oneNodeMs: Math.round(e), clusterMsPerMillion: Math.round((c / clusterEvents) * 1e6), oneNodeMsPerMillion: Math.round((e / embEvents) * 1e6) };
    }
    result.queries = { clusterEvents, oneNodeEvents: embEvents, perQuery };
    console.log(JSON.stringify({ queries: result.queries }));
    for (const n of nodes) await n.server.stop(15_000);
    await emb.server.stop(15_000);
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
