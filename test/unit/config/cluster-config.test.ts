/**
 * [queue], [kafka] and [cluster]: a cluster and a Kafka queue go together, each refusal names the
 * missing part; the single-node default (no sections) stays valid and unchanged.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../../src/config/index.js';
import { runCli } from '../../helpers/node-process.js';

const CLUSTER = { listen: '127.0.0.1:7071', peers: ['127.0.0.1:7072', 'node3.example:7073'], secret: 'a-shared-cluster-secret' };
const KAFKA = { brokers: '127.0.0.1:9092, 10.0.0.2:9092' };

t.test('no sections: a single node with the embedded queue, no problems', async (t) => {
  const { config, problems } = buildConfig({});
  t.strictSame(problems, []);
  t.equal(config.queue.kind, 'embedded');
  t.equal(config.kafka.brokers, '');
  t.equal(config.cluster.listen, '');
  t.strictSame(config.cluster.peers, []);
});

t.test('a full cluster with Kafka is accepted; brokers are normalised, properties passed through', async (t) => {
  const { config, problems } = buildConfig({
    queue: { kind: 'kafka' },
    kafka: { ...KAFKA, topic_prefix: 'prod-', topic_replication_factor: 3, min_insync_replicas: 2, properties: { 'socket.keepalive.enable': true, 'message.max.bytes': 2000000, 'security.protocol': 'plaintext' } },
    cluster: { ...CLUSTER, heartbeat_interval_ms: 500, failure_timeout_ms: 3000 },
  });
  t.strictSame(problems, []);
  t.equal(config.kafka.brokers, '127.0.0.1:9092,10.0.0.2:9092');
  t.strictSame({ ...config.kafka.properties }, { 'socket.keepalive.enable': true, 'message.max.bytes': 2000000, 'security.protocol': 'plaintext' });
  t.strictSame(config.cluster.peers, CLUSTER.peers);
});

t.test('a cluster without Kafka is refused, naming Kafka', async (t) => {
  const { problems } = buildConfig({ cluster: CLUSTER });
  t.strictSame(problems, ['cluster: a cluster needs Kafka, and it is missing: set [queue] kind = "kafka" and [kafka] brokers']);
  const peersOnly = buildConfig({ cluster: { peers: ['10.0.0.2:7070'], secret: CLUSTER.secret }, queue: { kind: 'kafka' }, kafka: KAFKA });
  t.strictSame(peersOnly.problems, ["cluster.listen: required in a cluster (host:port of this node's cluster protocol)"]);
});

t.test('Kafka without a cluster section is refused, naming the cluster section', async (t) => {
  const msg = 'kafka: Kafka is only used by a cluster, and the [cluster] section is missing: set [cluster] listen (and peers)';
  t.strictSame(buildConfig({ queue: { kind: 'kafka' }, kafka: KAFKA }).problems, [msg]);
  t.strictSame(buildConfig({ kafka: KAFKA }).problems, [msg], 'brokers alone count as Kafka');
  t.strictSame(buildConfig({ queue: { kind: 'kafka' } }).problems, [msg, 'kafka.brokers: required with queue.kind = "kafka" (e.g. "10.0.0.1:9092,10.0.0.2:9092")']);
});

t.test('a cluster with brokers but the embedded queue is refused', async (t) => {
  t.strictSame(buildConfig({ kafka: KAFKA, cluster: CLUSTER }).problems, ['queue.kind: must be "kafka" in a cluster (every node digests from the same Kafka topic)']);
  t.strictSame(buildConfig({ queue: { kind: 'kafka' }, cluster: CLUSTER }).problems, ['kafka.brokers: required with queue.kind = "kafka" (e.g. "10.0.0.1:9092,10.0.0.2:9092")']);
});

t.test('replication bounds both ways: 0 (off) or a rate a transfer can keep to', async (t) => {
  const bad = buildConfig({ cluster: { replication_outbound_bytes_per_second: 1000, replication_outbound_parallel_transfers: 0 } }).problems;
  t.match(bad, [/^cluster\.replication_outbound_bytes_per_second: must be 0 or an integer from 65536 to 1099511627776 \(got 1000\)$/, /^cluster\.replication_outbound_parallel_transfers: must be an integer from 1 to 64 \(got 0\)$/]);
  const ok = buildConfig({ cluster: { replication_outbound_bytes_per_second: 0, replication_outbound_parallel_transfers: 1 } });
  t.strictSame(ok.problems, []);
  t.equal(ok.config.cluster.replication_outbound_bytes_per_second, 0);
});

t.test('bad values name their key', async (t) => {
  const { problems } = buildConfig({
    queue: { kind: 'redis' },
    kafka: { brokers: 'localhost', topic_prefix: 'a b', topic_replication_factor: -1, delivery_timeout_ms: 5, properties: { 'Bad Name': 1, ok: [1] } },
    cluster: { listen: 'host:99999', peers: ['a:1', 7], heartbeat_interval_ms: 2000, failure_timeout_ms: 3000, segment_replication_factor: 0 },
  });
  t.match(problems, [
    /^queue\.kind: must be one of embedded, kafka \(got "redis"\)$/,
    /^kafka\.brokers: must be "host:port,host:port": "localhost" is not host:port/,
    /^kafka\.topic_prefix: must be letters, digits/,
    /^kafka\.topic_replication_factor: must be an integer from 0 to 32 \(got -1\)$/,
    /^kafka\.delivery_timeout_ms: must be an integer from 1000/,
    /^kafka\.properties: "Bad Name" is not a librdkafka property name/,
    /^cluster\.listen: must be host:port: "host:99999" is not host:port/,
    /^cluster\.peers: entries must be strings/,
    /^cluster\.segment_replication_factor: must be an integer from 1 to 16/,
    /^cluster\.failure_timeout_ms: must be at least twice cluster\.heartbeat_interval_ms \(2000\)$/,
  ]);
  t.equal(problems.length, 10, 'the queue/kafka/cluster rule is skipped when its options are invalid');
  t.match(buildConfig({ kafka: { properties: { ok: [1] } } }).problems[0], /^kafka\.properties: ok: must be a string, number or boolean/);
  t.match(buildConfig({ kafka: { properties: 'x' } }).problems[0], /^kafka\.properties: must be a table/);
  t.strictSame(buildConfig({ cluster: { listen: '[::1]:7070', secret: CLUSTER.secret }, kafka: KAFKA, queue: { kind: 'kafka' } }).problems, [], 'a bracketed IPv6 listen address');
});

t.test('min_insync_replicas above the replication factor is refused', async (t) => {
  const { problems } = buildConfig({ queue: { kind: 'kafka' }, kafka: { ...KAFKA, topic_replication_factor: 1, min_insync_replicas: 2 }, cluster: CLUSTER });
  t.strictSame(problems, ['kafka.min_insync_replicas: must not exceed kafka.topic_replication_factor (1), or no append could succeed']);
});

t.test('`logsvc config check` reports the missing part, and refuses to start a node', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-cluster-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'c.toml');
  await writeFile(file, '[cluster]\nlisten = "127.0.0.1:7071"\n');
  const r = await runCli(['config', 'check', '--config', file]);
  t.equal(r.code, 1);
  t.match(r.stdout + r.stderr, /cluster: a cluster needs Kafka, and it is missing/);
  await writeFile(file, '[queue]\nkind = "kafka"\n[kafka]\nbrokers = "127.0.0.1:9092"\n');
  const k = await runCli(['config', 'check', '--config', file]);
  t.equal(k.code, 1);
  t.match(k.stdout + k.stderr, /the \[cluster\] section is missing/);
  const n = await runCli(['node', '--config', file, '--port', '0', '--data-dir', join(dir, 'data')]);
  t.not(n.code, 0, 'the node does not start');
  t.match(n.stdout + n.stderr, /the \[cluster\] section is missing/);
});

t.test('a cluster needs a shared secret, unless it is a development cluster on loopback that says so', async (t) => {
  const base = { queue: { kind: 'kafka' }, kafka: KAFKA };
  const none = buildConfig({ ...base, cluster: { listen: '10.0.0.1:7071', peers: ['10.0.0.2:7072'] } }).problems;
  t.equal(none.length, 1);
  t.match(none[0], /^cluster\.secret: a cluster needs a shared secret, the same on every node \(secret or secret_file/);
  t.strictSame(buildConfig({ ...base, cluster: { listen: '10.0.0.1:7071', secret_file: '/etc/logsvc/cluster.secret' } }).problems, [], 'a secret file');
  t.strictSame(buildConfig({ ...base, cluster: { listen: '10.0.0.1:7071', secret: 'x'.repeat(16), secret_file: '/f' } }).problems, ['cluster.secret: give the cluster secret once, either secret or secret_file, not both']);
  const short = buildConfig({ ...base, cluster: { listen: '10.0.0.1:7071', secret: 'too-short' } }).problems;
  t.match(short, [/^cluster\.secret: must be 16 to 1024 characters without spaces \(got 9 characters; the value is not shown\)$/]);
  t.notMatch(short.join('\n'), /too-short/, 'a refused secret is not echoed');
  // Development: loopback only, and only when asked for.
  t.match(buildConfig({ ...base, cluster: { listen: '127.0.0.1:7071', peers: ['127.0.0.1:7072'] } }).problems, [/^cluster\.secret: a cluster needs a shared secret/], 'loopback alone is not enough');
  t.strictSame(buildConfig({ ...base, cluster: { listen: '127.0.0.1:7071', peers: ['localhost:7072', '[::1]:7073'], insecure_loopback: true } }).problems, [], 'insecure_loopback on loopback addresses');
  t.strictSame(buildConfig({ ...base, cluster: { listen: '127.0.0.1:7071', peers: ['10.0.0.2:7072'], insecure_loopback: true } }).problems, [
    'cluster.insecure_loopback: allowed only when every cluster address is a loopback address, and 10.0.0.2:7072 is not; set cluster.secret',
  ]);
});
