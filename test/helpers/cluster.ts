/**
 * A real cluster for tests: a KRaft broker (kafka-broker.ts) and N `logsvc node` processes sharing
 * it, each with its own data dir, cluster port and config; started, killed and restarted by PID.
 */
import { startBroker, freePort, type TestBroker } from './kafka-broker.js';
import { startNode, tempDir, type Teardown, type TestNode } from './node-process.js';
import { api } from './http.js';
import { TcpProxy } from './tcp-proxy.js';
import { sleep } from './query.js';
import { randomBytes } from 'node:crypto';

export interface ClusterNodeHandle {
  id: number;
  dataDir: string;
  clusterPort: number;
  config: string;
  node: TestNode;
}

export interface TestCluster {
  broker: TestBroker;
  nodes: ClusterNodeHandle[];
  /** With `proxied`: the proxy in front of node i+1's cluster port (the address the others dial); else empty. */
  proxies: TcpProxy[];
  /** Starts node `id` again on its data dir and config (after kill or stop). */
  restart(id: number): Promise<TestNode>;
  node(id: number): TestNode;
}

export interface ClusterOptions {
  nodes?: number;
  partitions?: number;
  heartbeatMs?: number;
  failureMs?: number;
  /** Extra TOML appended to every node's config. */
  extra?: string;
  /** digest.flush_block_seconds (default 1): in a cluster also how long a segment stays open. */
  flushSeconds?: number;
  /** Extra keys of every node's [cluster] section (e.g. "segment_replication_factor = 1"). */
  clusterExtra?: string;
  /** The cluster's shared secret ([cluster] secret); default: a random one per cluster. */
  secret?: string;
  /**
   * A TCP proxy the test controls in front of every node's cluster port, advertised to the others
   * (`cluster.advertise`). The lower id dials, so cutting the proxies of nodes a and b parts them
   * from each other while both still reach the nodes with higher ids than both.
   */
  proxied?: boolean;
}

export function clusterConfig(id: number, brokers: string, prefix: string, port: number, peers: number[], o: ClusterOptions): string {
  return `[node]
id = ${id}
[queue]
kind = "kafka"
[kafka]
brokers = "${brokers}"
topic_prefix = "${prefix}"
topic_replication_factor = 1
min_insync_replicas = 1
[cluster]
listen = "127.0.0.1:${port}"
peers = [${peers.map((p) => `"127.0.0.1:${p}"`).join(', ')}]
secret = "${o.secret ?? 'test-cluster-secret-0123456789'}"
heartbeat_interval_ms = ${o.heartbeatMs ?? 200}
failure_timeout_ms = ${o.failureMs ?? 2000}
${o.clusterExtra ?? ''}
[digest]
partitions = ${o.partitions ?? 6}
flush_block_seconds = ${o.flushSeconds ?? 1}
[health]
grace_period_seconds = 0
${o.extra ?? ''}
`;
}

export async function startCluster(t: Teardown, o: ClusterOptions = {}): Promise<TestCluster> {
  const broker = await startBroker(t);
  const n = o.nodes ?? 3;
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await freePort());
  const proxies = o.proxied === true ? await Promise.all(ports.map((port) => TcpProxy.start({ port }))) : [];
  if (proxies.length > 0) t.teardown(() => Promise.all(proxies.map((p) => p.close())));
  const dialed = proxies.length > 0 ? proxies.map((p) => p.port) : ports;
  const prefix = `c${Date.now().toString(36)}-`;
  // Every node of the cluster proves the same secret on the cluster port (docs/cluster-protocol.md).
  o = { ...o, secret: o.secret ?? `test-${randomBytes(12).toString('hex')}` };
  const nodes: ClusterNodeHandle[] = [];
  for (let i = 0; i < n; i++) {
    const id = i + 1;
    const dataDir = await tempDir(t, `logsvc-cluster-n${id}-`);
    const advertise = proxies.length > 0 ? `\nadvertise = "127.0.0.1:${proxies[i]!.port}"` : '';
    const config = clusterConfig(id, broker.brokers, prefix, ports[i]!, dialed.filter((_, j) => j !== i), { ...o, clusterExtra: `${o.clusterExtra ?? ''}${advertise}` });
    nodes.push({ id, dataDir, clusterPort: ports[i]!, config, node: undefined as unknown as TestNode });
  }
  // Started together, as an operator would: each waits for global state and its peers by itself.
  await Promise.all(nodes.map(async (h) => (h.node = await startNode(t, { dataDir: h.dataDir, config: h.config, readyTimeoutMs: 90_000 }))));
  const cluster: TestCluster = {
    broker,
    nodes,
    proxies,
    node: (id) => nodes.find((h) => h.id === id)!.node,
    async restart(id) {
      const h = nodes.find((x) => x.id === id)!;
      h.node = await startNode(t, { dataDir: h.dataDir, config: h.config, readyTimeoutMs: 90_000 });
      return h.node;
    },
  };
  return cluster;
}

/** GraphQL `cluster { nodes { id isAvailable } }` as node `base` sees it. */
export async function aliveAsSeenBy(base: string, token: string): Promise<number[]> {
  const res = await api(base, '/graphql', { token, body: JSON.stringify({ query: '{ cluster { nodes { id isAvailable } } }' }) });
  const body = JSON.parse(res.text) as { data?: { cluster: { nodes: { id: number; isAvailable: boolean }[] } } };
  if (res.status !== 200 || body.data === undefined) throw new Error(`cluster nodes: ${res.status} ${res.text.slice(0, 500)}`);
  return (body.data?.cluster.nodes ?? []).filter((x) => x.isAvailable).map((x) => x.id).sort((a, b) => a - b);
}

/** Waits until every listed node sees exactly `ids` alive. */
export async function waitForAlive(nodes: TestNode[], ids: number[], timeoutMs = 30_000): Promise<void> {
  const want = JSON.stringify([...ids].sort((a, b) => a - b));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await Promise.all(nodes.map((n) => aliveAsSeenBy(n.url, n.adminToken).catch((err: unknown) => String(err))));
    if (seen.every((s) => JSON.stringify(s) === want)) return;
    if (Date.now() > deadline) {
      const why = nodes.map((n) => `${n.url} exit=${String(n.proc.exitCode ?? n.proc.signalCode)} stderr tail:\n${n.stderr().slice(-1500)}`).join('\n');
      throw new Error(`nodes did not all see ${want} alive within ${timeoutMs} ms: ${JSON.stringify(seen)}\n${why}`);
    }
    await sleep(200);
  }
}


/** What GET /api/v1/clusterconfig/segments answers (docs/replication.md). */
export interface ReplicationStatus {
  factor: number;
  segments: number;
  underReplicated: number;
  pendingOwn: number;
  missing: number;
  active: number;
  queued: number;
  sending: number;
  sendRefused: number;
  corrupt: number;
  bytesReceived: number;
  bytesSent: number;
  surplusDeleted: number;
  nodes: { node: number; segments: number; bytes: number; events: number }[];
}

/** The replication status as `n` sees it. */
export async function replicationStatus(n: TestNode): Promise<ReplicationStatus> {
  const res = await api(n.url, '/api/v1/clusterconfig/segments', { token: n.adminToken });
  if (res.status !== 200) throw new Error(`segments: ${res.status} ${res.text}`);
  return res.json<ReplicationStatus>();
}
