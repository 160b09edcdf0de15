/**
 * Under-replication is counted by live holders, on a real cluster (three nodes, factor 2), over HTTP:
 * - all up and copied: the `replication` health check OK, REST and /metrics 0 under-replicated, and
 *   the GraphQL cluster sizes humioctl reads (`cluster show`, `cluster nodes list`) add up: every
 *   node's currentSize is what global state lists it as holding, properly replicated is every byte;
 * - kill -9 of a node: its copies no longer count, so the segments it held are under-replicated in
 *   the health check (WARN), REST, /metrics and GraphQL, though global state still lists them;
 * - restarted: back to OK once re-replicated;
 * - canBeSafelyUnregistered follows clusterUnregisterNode: false while the node's segments are on
 *   fewer than the factor of other live nodes, true once draining copied them, and then the
 *   unregistration (not forced) succeeds.
 */
import t from 'tap';
import { startCluster, waitForAlive, replicationStatus, waitFor, waitReportedToEnd } from '../helpers/cluster.js';
import { alive, clusterSizes, ingestLedger, ledger, replicationHealth, underReplicatedGauge, waitAllReplicated, waitOwnedBy } from '../helpers/replication.js';
import { gql } from '../helpers/http.js';
import { createRepo, sleep } from '../helpers/query.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(600_000);

const doc = (op: string): string => HUMIOCTL_DOCUMENTS.find((d) => d.operation === op)!.document;

t.test('a dead holder does not count: under-replication shows everywhere, then heals; canBeSafelyUnregistered follows the drain', async (t) => {
  // No self logs: every segment is the ledger's, so counts stay put while nothing is ingested.
  const c = await startCluster(t, { nodes: 3, partitions: 3, clusterExtra: 'segment_replication_factor = 2', extra: '[self_logs]\nenabled = false\n' });
  const [n1, n2, n3] = [c.node(1), c.node(2), c.node(3)];
  await waitForAlive([n1, n2, n3], [1, 2, 3]);
  const repo = await createRepo(n1.url, n1.adminToken, 'ledger');
  const N = 3000;
  // Requests of 100, each in a random partition: every node holds segments (one holds none when
  // every request lands in one partition: 3 * 3^-30 here, 3 * 3^-6 = 0.41 % with requests of 500).
  for (let i = 0; i < N; i += 500) {
    await ingestLedger([n1, n2, n3][(i / 500) % 3]!, repo.ingestToken, i, 500, 200, 100);
    await sleep(1200); // segments close at the flush interval: several per partition
  }
  const all = await waitAllReplicated([n1, n2, n3], 2 * N);

  // All up: nothing under-replicated, everywhere it is reported.
  const health = await replicationHealth(n1);
  t.equal(health.status, 'OK', `health: ${health.message}`);
  t.equal(health.fields.underReplicated, '0');
  t.equal(await underReplicatedGauge(n1), 0, '/metrics: 0 under-replicated');
  const shown = await clusterSizes(n1, doc('GetCluster'));
  const total = all.nodes.reduce((a, x) => a + x.bytes, 0) / 2;
  t.ok(total > 0, `${all.segments} segments, ${total} bytes`);
  t.same(
    { under: shown.underReplicatedSegmentSize, missing: shown.missingSegmentSize, over: shown.overReplicatedSegmentSize, properly: shown.properlyReplicatedSegmentSize, target: shown.targetProperlyReplicatedSegmentSize },
    { under: 0, missing: 0, over: 0, properly: total, target: total },
    'GraphQL cluster sizes: every byte properly replicated',
  );
  for (const x of all.nodes) {
    const node = (shown.nodes as Record<string, any>[]).find((m) => m.id === x.node)!;
    t.same(
      { current: node.currentSize, primary: node.primarySize, target: node.targetSize, inbound: node.inboundSegmentSize, outbound: node.outboundSegmentSize, solitary: node.solitarySegmentSize, safe: node.canBeSafelyUnregistered },
      { current: x.bytes, primary: x.bytes, target: x.bytes, inbound: 0, outbound: 0, solitary: 0, safe: false },
      `node ${x.node}: sizes from global state (${x.segments} segments); each of its segments is on one other node only, so it cannot leave safely`,
    );
  }
  // Disks: each node's own, and the others' from their heartbeats (all three share this machine's disk).
  for (const m of shown.nodes as Record<string, any>[]) {
    t.ok(m.totalSizeOfPrimary > 0 && m.freeOnPrimary > 0 && m.freeOnPrimary <= m.totalSizeOfPrimary, `asked on node 1, node ${m.id}'s disk: ${m.freeOnPrimary} free of ${m.totalSizeOfPrimary}`);
  }
  const listed = (await clusterSizes(n2, doc('ListClusterNodes'))).nodes as Record<string, any>[];
  t.same(listed.map((m) => [m.id, m.currentSize]), all.nodes.map((x) => [x.node, x.bytes]), 'asked on node 2: the same sizes (global state)');

  // kill -9 of node 3: what it held is under-replicated, though still listed.
  // The owners' last progress reports are out first: none of node 3's segments lies past the marks
  // its epoch will end with (such a segment would be void, and counted nowhere).
  await waitReportedToEnd(c, n1);
  const held3 = (await replicationStatus(n1)).nodes.find((x) => x.node === 3)!;
  await n3.kill();
  await waitForAlive([n1, n2], [1, 2]);
  const dead = await waitFor('node 1 to count node 3\'s segments under-replicated', async () => {
    const r = await replicationStatus(n1);
    return r.underReplicated >= held3.segments ? r : null;
  }, 60_000);
  t.ok(dead.underReplicated >= held3.segments, `REST: ${dead.underReplicated} under-replicated (node 3 held ${held3.segments})`);
  t.equal(dead.nodes.find((x) => x.node === 3)?.segments, held3.segments, 'global state still lists node 3 as their holder');
  const warn = await replicationHealth(n1);
  t.equal(warn.status, 'WARN', `health WARN: ${warn.message}`);
  t.ok(Number(warn.fields.underReplicated) >= held3.segments, `health underReplicated=${warn.fields.underReplicated}`);
  t.match(warn.message, /held by fewer than 2 live nodes/);
  t.ok((await underReplicatedGauge(n1)) >= held3.segments, '/metrics: the gauge counts them too');
  const deadSizes = await clusterSizes(n1, doc('GetCluster'));
  t.ok(deadSizes.underReplicatedSegmentSize >= held3.bytes, `GraphQL: ${deadSizes.underReplicatedSegmentSize} bytes under-replicated (node 3 held ${held3.bytes})`);
  t.equal(deadSizes.missingSegmentSize, 0, 'none missing: each has a live holder');
  const node3 = (deadSizes.nodes as Record<string, any>[]).find((m) => m.id === 3)!;
  t.same({ available: node3.isAvailable, safe: node3.canBeSafelyUnregistered }, { available: false, safe: false });

  // Back: OK once everything is held by two live nodes again.
  await c.restart(3);
  await waitForAlive(alive(c), [1, 2, 3]);
  await waitAllReplicated(alive(c), 2 * N);
  await waitOwnedBy(c.node(1), [1, 2, 3]);
  const healed = await waitFor('the health check OK again', async () => {
    const h = await replicationHealth(c.node(1));
    return h.status === 'OK' ? h : null;
  }, 60_000);
  t.equal(healed.fields.underReplicated, '0', 'health OK, 0 under-replicated');
  t.equal(await underReplicatedGauge(c.node(1)), 0, '/metrics: 0 again');
  t.equal((await clusterSizes(c.node(1), doc('GetCluster'))).underReplicatedSegmentSize, 0, 'GraphQL: 0 bytes under-replicated');

  // canBeSafelyUnregistered is what clusterUnregisterNode (not forced) decides.
  const safe = async (id: number): Promise<boolean> => ((await clusterSizes(c.node(1), doc('ListClusterNodes'))).nodes as Record<string, any>[]).find((m) => m.id === id)!.canBeSafelyUnregistered as boolean;
  t.equal(await safe(3), false, 'node 3 may not leave yet');
  const unregister = (): Promise<any> => gql(c.node(1).url, c.node(1).adminToken, 'mutation { clusterUnregisterNode(nodeID: 3, force: false) { cluster { nodes { id } } } }');
  const refused = await unregister();
  t.match(refused.errors?.[0]?.message ?? '', /being drained: \d+ segments/, 'and clusterUnregisterNode refuses, draining it');
  const draining = await waitFor('node 3 drained', async () => ((await safe(3)) ? true : null), 120_000);
  t.ok(draining, 'canBeSafelyUnregistered turns true once nodes 1 and 2 hold every segment node 3 holds');
  const accepted = await unregister();
  t.same(accepted.errors, undefined, 'and then the unregistration is accepted');
  t.same(accepted.data?.clusterUnregisterNode.cluster.nodes.map((x: { id: number }) => x.id).sort(), [1, 2]);
  await waitOwnedBy(c.node(1), [1, 2]);
  await c.node(3).stop();
  for (const n of [c.node(1), c.node(2)]) t.same(await ledger(n), { count: N, distinct: N, warnings: [] }, `asked on ${n.url}: the whole ledger, no warning`);
});
