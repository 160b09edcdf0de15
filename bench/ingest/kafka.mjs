#!/usr/bin/env node
// Kafka-mode ingest against the embedded queue, same load, one run: starts a local Kafka broker
// (bin/kafka-dev), then bench/ingest/run.mjs four times, each on a fresh spawned node:
//   1. embedded queue, closed loop (maximum)        2. queue.kind = "kafka", closed loop (maximum)
//   3. embedded at half the lower maximum (open loop) 4. kafka at the same rate
// and prints events/s and ack p50/p99 side by side, with the targets (Kafka >= 70% of the
// embedded throughput; Kafka ack p99 at half load < 50 ms).
//
//   node bench/ingest/kafka.mjs [--seconds 20] [--dataset accesslog] [--connections 8] [--batch 500]
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { start as startKafka, stop as stopKafka } from '../../bin/kafka-dev.mjs';

const RUN = fileURLToPath(new URL('./run.mjs', import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    dataset: { type: 'string', default: 'accesslog' },
    connections: { type: 'string', default: '8' },
    batch: { type: 'string', default: '500' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write('usage: node bench/ingest/kafka.mjs [--seconds 20] [--dataset accesslog] [--connections 8] [--batch 500]\n');
  process.exit(0);
}
const log = (s) => process.stdout.write(`${s}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function runBench(args) {
  return new Promise((resolve, reject) => {
    log(`\n$ node bench/ingest/run.mjs ${args.join(' ')}`);
    const p = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`run.mjs exited with ${code}`))));
  });
}

const root = await mkdtemp(join(tmpdir(), 'logsvc-bench-kafka-'));
const kafkaDir = join(root, 'kafka');
const out = join(root, 'results.jsonl');
let broker = null;
try {
  broker = await startKafka({ dataDir: kafkaDir, port: await freePort(), controllerPort: await freePort() });
  log(`kafka broker ${broker.brokers} (PID ${broker.pid})`);
  const kafkaToml = join(root, 'kafka.toml');
  const common = ['--target', 'node', '--dataset', values.dataset, '--seconds', values.seconds, '--connections', values.connections, '--batch', values.batch, '--out', out];
  let n = 0;
  const kafkaConfig = async () => {
    // A fresh topic per node: each spawned node has an empty data dir (its checkpoints start at 0).
    await writeFile(
      kafkaToml,
      `[queue]\nkind = "kafka"\n[kafka]\nbrokers = "${broker.brokers}"\ntopic_prefix = "bench${++n}-"\ntopic_replication_factor = 1\nmin_insync_replicas = 1\n[cluster]\nlisten = "127.0.0.1:${await freePort()}"\nsecret = "bench-cluster-secret-0123456789"\n`,
    );
    return ['--node-config', kafkaToml];
  };
  await runBench(common);
  await runBench([...common, ...(await kafkaConfig())]);
  const lines = () => readFile(out, 'utf8').then((t) => t.trim().split('\n').map((l) => JSON.parse(l)));
  const max = (await lines()).map((l) => l.results.find((r) => r.target === 'node'));
  const rate = Math.round(Math.min(max[0].eventsPerSec, max[1].eventsPerSec) / 2);
  await runBench([...common, '--rate', String(rate)]);
  await runBench([...common, '--rate', String(rate), ...(await kafkaConfig())]);
  const all = (await lines()).map((l) => l.results.find((r) => r.target === 'node'));
  const row = (name, r) => `| ${name} | ${Math.round(r.eventsPerSec).toLocaleString('en-US')} | ${r.latencyMs.p50.toFixed(1)} | ${r.latencyMs.p99.toFixed(1)} |`;
  log('\n| run | events/s | ack p50 ms | ack p99 ms |\n|---|---|---|---|');
  log(row('embedded, closed loop', all[0]));
  log(row('kafka, closed loop', all[1]));
  log(row(`embedded, ${rate.toLocaleString('en-US')} events/s`, all[2]));
  log(row(`kafka, ${rate.toLocaleString('en-US')} events/s`, all[3]));
  const share = all[1].eventsPerSec / all[0].eventsPerSec;
  log(`\nkafka/embedded throughput: ${(share * 100).toFixed(1)} % (target >= 70 %): ${share >= 0.7 ? 'met' : 'NOT met'}`);
  log(`kafka ack p99 at half load: ${all[3].latencyMs.p99.toFixed(1)} ms (target < 50 ms): ${all[3].latencyMs.p99 < 50 ? 'met' : 'NOT met'}`);
} finally {
  if (broker !== null) await stopKafka({ dataDir: kafkaDir });
  await rm(root, { recursive: true, force: true });
}
