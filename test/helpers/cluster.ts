/**
 * A real cluster for tests: a KRaft broker (kafka-broker.ts) and N `logsvc node` processes sharing
 * it, each with its own data dir, cluster port and config; started, killed and restarted by PID.
 */
import { startBroker, type TestBroker } from './kafka-broker.js';
import { freePort } from './free-port.js';
import { startNode, tempDir, type Teardown, type TestNode } from './node-process.js';
import { api } from './http.js';
import { TcpProxy } from './tcp-proxy.js';
import { queryJson, sleep } from './query.js';
import { segmentFiles } from './segments.js';
import { KafkaAdmin } from '../../src/queue/kafka-client.js';
import { ingestTopic } from '../../src/queue/kafka-queue.js';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

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
  /** Extra keys of every node's [digest] section (e.g. "block_target_bytes = 1048576"). */
  digestExtra?: string;
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
${o.digestExtra ?? ''}
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
  /** Leftovers deleted on the node asked (void segment files, abandoned part files), and its unlisted files. */
  voidDeleted: number;
  partsDeleted: number;
  unlisted: number;
  nodes: { node: number; segments: number; bytes: number; events: number }[];
}

/** The replication status as `n` sees it. */
export async function replicationStatus(n: TestNode): Promise<ReplicationStatus> {
  const res = await api(n.url, '/api/v1/clusterconfig/segments', { token: n.adminToken });
  if (res.status !== 200) throw new Error(`segments: ${res.status} ${res.text}`);
  return res.json<ReplicationStatus>();
}

/**
 * Polls `fn` (every 500 ms) until it gives something other than null; a thrown error counts as null.
 * On timeout the error names `what`, the last error, and what `explain` says (the state a CI log needs
 * to explain the failure afterwards).
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | null>, timeoutMs: number, explain?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const v = await fn().catch((err: unknown) => ((last = err), null));
    if (v !== null) return v;
    if (Date.now() > deadline) {
      const why = explain === undefined ? '' : `\n${await explain().catch((err: unknown) => `(explain failed: ${String(err)})`)}`;
      throw new Error(`timed out waiting for ${what} (${String(last)})${why}`);
    }
    await sleep(500);
  }
}

/** What a node has on disk: its segment files and the part files of copies under way or left behind. */
export async function filesOnDisk(h: ClusterNodeHandle): Promise<{ segments: number; parts: number }> {
  const parts = await readdir(join(h.dataDir, 'segments', '.incoming')).catch(() => []);
  return { segments: (await segmentFiles(h.dataDir)).length, parts: parts.filter((n) => n.endsWith('.part')).length };
}

/**
 * Whether every node holds on disk exactly the segment files global state lists it as holding: no
 * void, unlisted or surplus file left, no part file. Null until then, with `why` saying what differs.
 */
export async function filesSettled(c: TestCluster, asked: TestNode, why: { last: string }): Promise<ReplicationStatus | null> {
  const r = await replicationStatus(asked);
  const each: string[] = [];
  let ok = true;
  for (const h of c.nodes) {
    const disk = await filesOnDisk(h);
    const listed = r.nodes.find((x) => x.node === h.id)?.segments ?? 0;
    const own = await replicationStatus(h.node);
    each.push(`node ${h.id}: ${disk.segments} files, ${disk.parts} part files, ${listed} listed, ${own.unlisted} unlisted in its catalog`);
    if (disk.segments !== listed || disk.parts !== 0 || own.unlisted !== 0 || own.active + own.queued > 0) ok = false;
  }
  why.last = each.join('; ');
  return ok ? r : null;
}

/**
 * Asked on `n`: every acknowledged id is found exactly once (groupBy over `field`), and the ids add
 * up to the count. Returns what differs (empty lists when all is well).
 */
export async function exactlyOnce(n: TestNode, repo: string, acked: ReadonlySet<string>, field = 'uid'): Promise<{ found: number; missing: string[]; twice: [string, number][] }> {
  const rows = await queryJson(n.url, repo, { queryString: `groupBy(${field}, function=count(), limit=max)`, start: '1d' }, { token: n.adminToken });
  const counts = new Map(rows.map((r) => [String(r[field]), Number(r._count)]));
  return {
    found: rows.reduce((a, r) => a + Number(r._count), 0),
    missing: [...acked].filter((id) => !counts.has(id)),
    twice: [...counts].filter(([, k]) => k !== 1),
  };
}

/** The ingest topic's end offset per partition, read from the broker. */
export async function ingestEnds(c: TestCluster): Promise<number[]> {
  const prefix = /topic_prefix = "([^"]+)"/.exec(c.nodes[0]!.config)![1]!;
  const admin = await KafkaAdmin.connect({ brokers: c.broker.brokers }, 10_000);
  try {
    const topic = ingestTopic(prefix);
    const n = (await admin.partitionCount(topic)) ?? 0;
    const out: number[] = [];
    for (let p = 0; p < n; p++) out.push((await admin.watermarks(topic, p, 10_000)).high);
    return out;
  } finally {
    await admin.close();
  }
}

/**
 * Waits until every digest partition's reported checkpoint (global state, as `asked` sees it) is at
 * the ingest topic's end as it is now: every record sent so far is in segments held by enough
 * nodes, and the owners' reports saying so (checkpoint and marks, one event) are out. What a fixed
 * sleep "for the last progress reports" stood in for.
 */
export async function waitReportedToEnd(c: TestCluster, asked: TestNode, timeoutMs = 90_000): Promise<void> {
  const ends = await ingestEnds(c);
  await waitFor(`every partition's reported checkpoint at the queue end (${JSON.stringify(ends)})`, async () => {
    const res = await api(asked.url, '/api/v1/clusterconfig/digest', { token: asked.adminToken });
    if (res.status !== 200) return null;
    const parts = res.json<{ partition: number; checkpoint: number }[]>();
    return parts.length === ends.length && parts.every((p) => p.checkpoint >= ends[p.partition]!) ? true : null;
  }, timeoutMs);
}
