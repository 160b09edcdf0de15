/**
 * Helpers of the cluster benchmarks (bench/cluster/*.mjs): free ports, child runs, the REST calls
 * they make, bench/ingest runs against a node, and a cluster node's TOML.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { cleanupAll, makeTempDir } from './processes.mjs';
import { createControlClient, graphql } from './http.mjs';

export const KAFKA_DEV = fileURLToPath(new URL('../../bin/kafka-dev.mjs', import.meta.url));
export const INGEST_BENCH = fileURLToPath(new URL('../ingest/run.mjs', import.meta.url));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

export function run(cmd, argv) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [cmd, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d.toString()));
    p.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${argv[0]} exited ${code}`))));
  });
}

export async function api(url, path, token, body) {
  const res = await fetch(new URL(path, url), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

export async function createRepo(url, adminToken, name) {
  const data = await graphql(createControlClient(url), adminToken, `mutation { createRepository(name: "${name}") { repository { ingestTokens { token } } } }`);
  return data.createRepository.repository.ingestTokens[0].token;
}

/** A bench/ingest run against `url` (`o.dataset`, `o.seconds`); the last result line. */
export async function ingestBench(url, token, extra, o) {
  const dir = await makeTempDir('logsvc-bench-cluster-out-');
  const out = join(dir, 'r.jsonl');
  await run(INGEST_BENCH, ['--url', url, '--token', token, '--target', 'node', '--dataset', o.dataset, '--seconds', String(o.seconds), '--warmup', '2', '--out', out, ...extra]);
  const lines = (await readFile(out, 'utf8')).trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

/** Events/s and ack latency of the node target in a bench/ingest result line. */
export function summary(line) {
  const r = (line.results ?? []).find((x) => typeof x?.eventsPerSec === 'number');
  if (r === undefined) throw new Error(`no result in ${JSON.stringify(line).slice(0, 300)}`);
  return { eventsPerSec: Math.round(r.eventsPerSec), p50: r.latencyMs.p50, p99: r.latencyMs.p99 };
}

/** A cluster node's config; `clusterExtra` adds keys to [cluster]. */
export function clusterToml(id, brokers, prefix, port, peers, failureMs, clusterExtra = '') {
  return `[node]\nid = ${id}\n[queue]\nkind = "kafka"\n[kafka]\nbrokers = "${brokers}"\ntopic_prefix = "${prefix}"\ntopic_replication_factor = 1\nmin_insync_replicas = 1\n[cluster]\nlisten = "127.0.0.1:${port}"\nsecret = "bench-cluster-secret-0123456789"\npeers = [${peers.map((p) => `"127.0.0.1:${p}"`).join(', ')}]\nheartbeat_interval_ms = 200\nfailure_timeout_ms = ${failureMs}\n${clusterExtra}\n[digest]\npartitions = 6\nflush_block_seconds = 1\n[health]\ngrace_period_seconds = 0\n`;
}


/** `--name value` from argv, or the default. */
export function option(args, name, dflt) {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
}

/**
 * A local KRaft broker for a benchmark (bin/kafka-dev) under `root`, stopped by `stop()`; on SIGINT
 * or SIGTERM every child process and the broker are stopped before the process exits.
 */
export async function startBenchBroker(root) {
  const kdir = join(root, 'kafka');
  const stop = () => run(KAFKA_DEV, ['stop', '--data-dir', kdir]).catch(() => undefined);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      void cleanupAll()
        .then(stop)
        .finally(() => process.exit(130));
    });
  }
  const [kport, cport] = [await freePort(), await freePort()];
  await run(KAFKA_DEV, ['fetch']);
  await run(KAFKA_DEV, ['start', '--data-dir', kdir, '--port', String(kport), '--controller-port', String(cport)]);
  return { brokers: `127.0.0.1:${kport}`, stop };
}
