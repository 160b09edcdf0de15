/**
 * Waiting on and reading a real cluster's segment replication over HTTP (docs/replication.md):
 * fully replicated, partitions owned, a ledger of known events ingested and counted back, and the
 * `replication` health check, GraphQL cluster sizes and /metrics gauge as a node reports them.
 */
import { aliveAsSeenBy, replicationStatus, type ReplicationStatus, type TestCluster } from './cluster.js';
import { api, gql } from './http.js';
import { parsePrometheus, sumOf } from './prometheus.js';
import { runJob, sleep } from './query.js';
import type { TestNode } from './node-process.js';

/** Waits until `n` sees every segment held by the factor and nothing of its own waiting. */
export async function waitReplicated(n: TestNode, timeoutMs = 90_000, minSegments = 1): Promise<ReplicationStatus> {
  const deadline = Date.now() + timeoutMs;
  let r: ReplicationStatus | null = null;
  for (;;) {
    r = await replicationStatus(n).catch(() => null);
    if (r !== null && r.segments >= minSegments && r.underReplicated === 0 && r.pendingOwn === 0 && r.active === 0 && r.queued === 0) return r;
    if (Date.now() > deadline) throw new Error(`not fully replicated within ${timeoutMs} ms: ${JSON.stringify(r)}`);
    await sleep(300);
  }
}

/** Waits until every node sees every segment held by the factor, and `events` held over all nodes. */
export async function waitAllReplicated(nodes: TestNode[], events: number, timeoutMs = 90_000): Promise<ReplicationStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rs = await Promise.all(nodes.map((n) => waitReplicated(n, timeoutMs)));
    const held = rs[0]!.nodes.reduce((a, x) => a + x.events, 0);
    if (held === events) return rs[0]!;
    if (Date.now() > deadline) return rs[0]!;
    await sleep(300);
  }
}

/** One digest partition as GET /api/v1/clusterconfig/digest reports it. */
export interface DigestPartition {
  partition: number;
  hosts: number[];
  owner: number | null;
  epoch: number;
  checkpoint: number;
  digesting: boolean;
}

export async function digestPartitions(n: TestNode): Promise<DigestPartition[]> {
  const res = await api(n.url, '/api/v1/clusterconfig/digest', { token: n.adminToken });
  if (res.status !== 200) throw new Error(`digest: ${res.status} ${res.text}`);
  return res.json<DigestPartition[]>();
}

/**
 * What each node says of the cluster, one line per node: who it sees alive, each digest partition
 * (owner, epoch, reported checkpoint) and its replication counters. For timeout messages.
 */
export async function explainCluster(nodes: TestNode[]): Promise<string> {
  const lines = await Promise.all(
    nodes.map(async (n) => {
      const [seen, parts, r] = await Promise.all([
        aliveAsSeenBy(n.url, n.adminToken).catch((err: unknown) => String(err)),
        digestPartitions(n).catch((err: unknown) => String(err)),
        replicationStatus(n).catch((err: unknown) => String(err)),
      ]);
      const ps = typeof parts === 'string' ? parts : parts.map((p) => `p${p.partition} owner ${p.owner} epoch ${p.epoch} cp ${p.checkpoint}${p.digesting ? '' : ' (not digesting)'}`).join('; ');
      const rs = typeof r === 'string' ? r : `pendingOwn ${r.pendingOwn} missing ${r.missing} under ${r.underReplicated} active ${r.active} queued ${r.queued} sending ${r.sending} refused ${r.sendRefused} corrupt ${r.corrupt} holders ${JSON.stringify(r.nodes.map((x) => [x.node, x.segments]))}`;
      return `${n.url}: alive ${JSON.stringify(seen)} | ${ps} | ${rs}`;
    }),
  );
  return lines.join('\n');
}

/** Waits until every digest partition has a live owner that has started digesting (a takeover or handover is complete). */
export async function waitOwnedBy(n: TestNode, live: number[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const parts = await digestPartitions(n).catch(() => null);
    if (parts !== null && parts.every((p) => p.owner !== null && live.includes(p.owner) && p.digesting)) return;
    if (Date.now() > deadline) throw new Error(`partitions not owned by ${JSON.stringify(live)}: ${JSON.stringify(parts)}`);
    await sleep(200);
  }
}

/** Ingests events `e<from>` .. `e<from+count-1>` in requests of `batch` (each lands in a random partition). */
export async function ingestLedger(n: TestNode, token: string, from: number, count: number, pad = 0, batch = 500): Promise<void> {
  for (let i = from; i < from + count; i += batch) {
    const ids = Array.from({ length: Math.min(batch, from + count - i) }, (_, k) => i + k);
    const body = JSON.stringify([{ tags: { src: 'ledger' }, events: ids.map((id) => ({ timestamp: Date.now(), attributes: { uid: `e${id}` }, rawstring: `event e${id} ${pad > 0 ? randomText(pad) : ''}` })) }]);
    const res = await api(n.url, '/api/v1/ingest/humio-structured', { token, body });
    if (res.status !== 200) throw new Error(`ingest: ${res.status} ${res.text}`);
  }
}

function randomText(n: number): string {
  let s = '';
  while (s.length < n) s += Math.random().toString(36).slice(2);
  return s.slice(0, n);
}

/** count() and distinct uids of repository `repo`, with the warnings, asked on `n`. */
export async function ledger(n: TestNode, repo = 'ledger'): Promise<{ count: number; distinct: number; warnings: string[] }> {
  const job = await runJob(n.url, repo, n.adminToken, { queryString: 'count(as=c)', start: '1d' });
  const job2 = await runJob(n.url, repo, n.adminToken, { queryString: 'count(uid, distinct=true, as=d)', start: '1d' });
  const warnings = [...((job.final.metaData?.warnings as string[] | undefined) ?? []), ...((job2.final.metaData?.warnings as string[] | undefined) ?? [])];
  return { count: Number(job.final.events[0]?.c ?? 0), distinct: Number(job2.final.events[0]?.d ?? 0), warnings };
}

/** The nodes of `c` whose process runs. */
export const alive = (c: TestCluster): TestNode[] => c.nodes.filter((h) => h.node.proc.exitCode === null && h.node.proc.signalCode === null).map((h) => h.node);

/** The `replication` health check's status and fields as `n` reports it (GET /api/v1/health-json). */
export async function replicationHealth(n: TestNode): Promise<{ status: string; fields: Record<string, string>; message: string }> {
  const res = await api(n.url, '/api/v1/health-json', { token: n.adminToken });
  if (res.status !== 200) throw new Error(`health-json: ${res.status} ${res.text}`);
  type Check = { name: string; status: string; statusMessage: string; fields: Record<string, string> };
  const doc = res.json<{ oks: Check[]; warnings: Check[]; downs: Check[] }>();
  const c = [...doc.oks, ...doc.warnings, ...doc.downs].find((x) => x.name === 'replication');
  if (c === undefined) throw new Error(`no replication check in ${res.text.slice(0, 500)}`);
  return { status: c.status, fields: c.fields, message: c.statusMessage };
}

/** logsvc_replication_under_replicated_segments as `n`'s /metrics reports it. */
export async function underReplicatedGauge(n: TestNode): Promise<number> {
  const res = await api(n.url, '/metrics');
  if (res.status !== 200) throw new Error(`metrics: ${res.status} ${res.text.slice(0, 300)}`);
  return sumOf(await parsePrometheus(res.text), 'logsvc_replication_under_replicated_segments');
}

/** The GraphQL cluster sizes humioctl's `cluster show` / `cluster nodes list` read, as `n` answers them. */
export async function clusterSizes(n: TestNode, document: string): Promise<Record<string, any>> {
  const res = await gql(n.url, n.adminToken, document);
  if (res.errors !== undefined || res.data === undefined) throw new Error(`GetCluster: ${JSON.stringify(res.errors)}`);
  return res.data.cluster as Record<string, any>;
}
