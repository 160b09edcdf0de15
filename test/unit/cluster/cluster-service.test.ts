/**
 * ClusterService with the cluster Membership as its Liveness: the node list (GraphQL
 * `cluster.nodes`), the not-alive count (health `not-alive-count`) and partition ownership follow
 * real heartbeats between three membership instances over TCP.
 */
import t from 'tap';
import { ClusterService } from '../../../src/cluster/index.js';
import { EmbeddedGlobalLog, GlobalStore } from '../../../src/global/index.js';
import { systemClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { tempDir } from '../../helpers/node-process.js';
import { startMember, waitFor } from '../../helpers/membership.js';

t.test('node list, not-alive count and owners follow membership', async (t) => {
  const store = await GlobalStore.open(new EmbeddedGlobalLog(await tempDir(t)), { snapshotEvery: 100, logger: silentLogger });
  t.teardown(() => store.close());
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  const c = await startMember(t, 3, [a.addr]);
  const cluster = new ClusterService(store, a.m, systemClock);
  for (const n of [a, b, c]) await cluster.registerSelf({ id: n.id, uuid: n.uuid, name: `node-${n.id}`, uri: `http://127.0.0.1:${8000 + n.id}` });
  await cluster.setLayout({ kind: 'local-admin', isRoot: true }, [
    { partition: 0, hosts: [1, 2, 3] },
    { partition: 1, hosts: [2, 3, 1] },
    { partition: 2, hosts: [3, 1, 2] },
  ]);
  await waitFor('all alive on node 1', () => cluster.notAlive().notAlive === 0);
  t.strictSame(cluster.nodes().map((n) => [n.id, n.isAvailable]), [[1, true], [2, true], [3, true]]);
  t.ok(cluster.nodes().every((n) => typeof n.lastHeartbeat === 'number'));
  t.strictSame(cluster.owners(), [1, 2, 3]);

  await c.m.stop();
  await waitFor('node 3 not alive', () => cluster.notAlive().notAlive === 1);
  t.strictSame(cluster.notAlive(), { notAlive: 1, total: 3 });
  t.strictSame(cluster.nodes().find((n) => n.id === 3)?.isAvailable, false);
  t.strictSame(cluster.owners(), [1, 2, 1], "node 3's partition goes to its next host");
  t.strictSame(cluster.ownedPartitions(1), [0, 2]);
  const handover = [{ partition: 0, from: b.id, to: 1, phase: 'flushing' as const }];
  t.strictSame(cluster.ownedPartitions(2, handover), [0, 1], 'the current owner keeps a partition while handing it over');
  t.strictSame(cluster.ownedPartitions(1, handover), [2]);
});

t.test('a partition\'s only host cannot be dropped in one layout change; the refusal names the partitions', async (t) => {
  const { validateLayout } = await import('../../../src/cluster/partition-layout.js');
  const current = [[1], [1], [2, 1]];
  const known = new Set([1, 2]);
  t.throws(() => validateLayout([{ partition: 0, hosts: [2] }, { partition: 1, hosts: [2] }, { partition: 2, hosts: [2] }], current, known), /node 1 is the only host of partitions 0, 1/);
  t.same(validateLayout([{ partition: 0, hosts: [2, 1] }, { partition: 1, hosts: [1] }, { partition: 2, hosts: [2] }], current, known), [[2, 1], [1], [2]], 'listing another node first is allowed, and a node that is not the only host may go');
});
