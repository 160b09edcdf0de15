/**
 * The checkpoint gate end to end (docs/replication.md, "Progress"), on a real broker and three real
 * nodes, factor 2, over HTTP only. Partition 0 is hosted [1, 2, 3] (node 1 digests it, node 2 is its
 * replica), partition 1 [3, 1, 2] (node 3 digests it, node 1 is its replica). The reported
 * checkpoint is global state's (GET /api/v1/clusterconfig/digest): logsvc keeps no consumer-group
 * offsets, a takeover reads Kafka from this checkpoint.
 *
 * - Node 2 killed: node 1's new segments of partition 0 are held by node 1 alone while two nodes are
 *   up, so partition 0's reported checkpoint stays where it was; partition 1's (held by nodes 3 and
 *   1) advances meanwhile. Node 2 back: it copies them and partition 0's checkpoint advances.
 * - The link between nodes 1 and 2 cut (TCP proxies on their cluster ports; both still reach node 3
 *   and each other's progress through Kafka, so nobody takes over): node 1's copies to node 2 cannot
 *   be made, partition 0's checkpoint stays put again. Then node 1 (the writer) is killed -9 before
 *   its copies land: node 2 takes partition 0 over from the checkpoint that waited and re-reads the
 *   events from Kafka; nodes 2 and 3 answer in full. Healed and restarted, every node finds every
 *   acknowledged event exactly once, without a warning.
 */
import t, { type Test } from 'tap';
import { startCluster, waitForAlive, replicationStatus, waitFor, waitReportedToEnd } from '../helpers/cluster.js';
import { alive, digestPartitions, explainCluster, ingestLedger, ledger, type DigestPartition, waitAllReplicated, waitOwnedBy } from '../helpers/replication.js';
import { api } from '../helpers/http.js';
import { createRepo, sleep } from '../helpers/query.js';
import type { TestNode } from '../helpers/node-process.js';

t.setTimeout(600_000);

const part = async (n: TestNode, p: number): Promise<DigestPartition> => (await digestPartitions(n)).find((x) => x.partition === p)!;

/** Ingests `count` events from `from` in requests of 100, alternating between `nodes` (each request lands in a random partition). */
async function ingest(nodes: TestNode[], token: string, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 100) await ingestLedger(nodes[(i / 100) % nodes.length]!, token, i, 100);
}

/**
 * Node 2 is dead: `count` events are ingested, partition 1's checkpoint passes `p1Before` (its
 * segments are on two live nodes), node 1 has closed segments of partition 0 waiting for their
 * copy; for several report intervals after that, partition 0's checkpoint stays at `p0Before`.
 */
async function gateHolds(t: Test, n1: TestNode, n3: TestNode, token: string, from: number, count: number): Promise<number> {
  const p0Before = (await part(n1, 0)).checkpoint;
  const p1Before = (await part(n1, 1)).checkpoint;
  await ingest([n1, n3], token, from, count);
  const p1 = await waitFor('partition 1 (held by nodes 3 and 1) to advance', async () => {
    const p = await part(n1, 1);
    return p.checkpoint > p1Before ? p.checkpoint : null;
  }, 60_000, () => explainCluster([n1, n3]));
  t.ok(p1 > p1Before, `partition 1's checkpoint advances meanwhile: ${p1Before} -> ${p1}`);
  const waiting = await waitFor('node 1 to hold closed segments of partition 0 waiting for a copy', async () => {
    const r = await replicationStatus(n1);
    return r.pendingOwn > 0 ? r.pendingOwn : null;
  }, 60_000, () => explainCluster([n1, n3]));
  const seen: number[] = [];
  for (let i = 0; i < 10; i++) {
    seen.push((await part(n1, 0)).checkpoint);
    await sleep(500);
  }
  t.same([...new Set(seen)], [p0Before], `partition 0's checkpoint stays at ${p0Before} while node 1's ${waiting} segment(s) are held by node 1 alone`);
  return p0Before;
}

t.test('a checkpoint waits for copies on the factor of live nodes; kill -9 of the writer before they land loses nothing', async (t) => {
  const c = await startCluster(t, { nodes: 3, partitions: 2, proxied: true, clusterExtra: 'segment_replication_factor = 2', extra: '[self_logs]\nenabled = false\n' });
  const [n1, n3] = [c.node(1), c.node(3)];
  await waitForAlive(alive(c), [1, 2, 3]);
  const layout = await api(n1.url, '/api/v1/clusterconfig/ingestpartitions', { token: n1.adminToken, body: JSON.stringify([{ partition: 0, hosts: [1, 2, 3] }, { partition: 1, hosts: [3, 1, 2] }]) });
  t.equal(layout.status, 200, `layout set: ${layout.text}`);
  await waitFor('partition 0 digested by node 1, partition 1 by node 3', async () => {
    const ps = await digestPartitions(n1);
    return ps[0]?.owner === 1 && ps[1]?.owner === 3 && ps.every((p) => p.digesting) ? true : null;
  }, 60_000, () => explainCluster(alive(c)));
  const repo = await createRepo(n1.url, n1.adminToken, 'ledger');

  // 1. The replica of partition 0 is dead: its checkpoint waits, then advances once it is back.
  await c.node(2).kill();
  await waitForAlive([n1, n3], [1, 3]);
  const A = 2000;
  const p0Held = await gateHolds(t, n1, n3, repo.ingestToken, 0, A);
  await c.restart(2);
  await waitForAlive(alive(c), [1, 2, 3]);
  const p0Healed = await waitFor('partition 0 to advance once node 2 holds the copies', async () => {
    const p = await part(n1, 0);
    return p.checkpoint > p0Held ? p.checkpoint : null;
  }, 90_000, () => explainCluster(alive(c)));
  t.ok(p0Healed > p0Held, `node 2 back: partition 0's checkpoint advances ${p0Held} -> ${p0Healed}`);
  t.equal((await part(n1, 0)).owner, 1, 'still digested by node 1');
  await waitAllReplicated(alive(c), 2 * A);

  // 2. The copies blocked by a cut link, and the writer killed before they land.
  await waitReportedToEnd(c, n1); // the owners' last progress reports are out
  c.proxies[0]!.cut();
  c.proxies[1]!.cut();
  await waitForAlive([n1], [1, 3]);
  await waitForAlive([c.node(2)], [2, 3]);
  const B = 2000;
  await gateHolds(t, n1, n3, repo.ingestToken, A, B);
  t.equal((await part(n1, 0)).owner, 1, 'node 1 still digests partition 0 (node 2 sees its progress through Kafka)');
  await n1.kill();
  await waitForAlive([c.node(2), n3], [2, 3]);
  await waitOwnedBy(n3, [2, 3]);
  t.equal((await part(n3, 0)).owner, 2, 'node 2 took partition 0 over');
  for (const n of [c.node(2), n3]) {
    t.same(await ledger(n), { count: A + B, distinct: A + B, warnings: [] }, `node 1 dead, asked on ${n.url}: every acknowledged event, once, no warning (re-read from Kafka from the checkpoint that waited)`);
  }

  c.proxies[0]!.heal();
  c.proxies[1]!.heal();
  await c.restart(1);
  await waitForAlive(alive(c), [1, 2, 3]);
  await waitAllReplicated(alive(c), 2 * (A + B), 180_000);
  await waitOwnedBy(c.node(1), [1, 2, 3]);
  for (const n of alive(c)) t.same(await ledger(n), { count: A + B, distinct: A + B, warnings: [] }, `all back: asked on ${n.url}, acked ${A + B}, found ${A + B} once, no warning`);
});
