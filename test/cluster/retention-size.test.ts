/**
 * Size retention and repository sizes in a real 3-node cluster (replication factor 2): the
 * repository's size is that of its segments counted once each, the same on every node; a
 * storage-size limit holds for the cluster's data as a whole (the distinct segment files on all
 * nodes' disks add up to no more than the limit, with the newest data kept), not for each node's
 * share; the ingest volume is the cluster's, the same on every node; and a group role granted on
 * one node gives (and, the user out of the group, takes away) access on another.
 */
import t from 'tap';
import { stat } from 'node:fs/promises';
import { startCluster, waitForAlive, replicationStatus } from '../helpers/cluster.js';
import { segmentFiles } from '../helpers/segments.js';
import { countOf, createRepo, ingestStructured, mustGql, until } from '../helpers/query.js';
import { api, createUser } from '../helpers/http.js';
import type { TestNode } from '../helpers/node-process.js';

t.setTimeout(400_000);

const HOUR = 3_600_000;
const ALL_TIME = { start: '30days' };
const BATCHES = 24;
const PER_BATCH = 25;

/** The repository's segment files on every node's disk: relative path -> bytes (a copy on two nodes counts once), and the bytes each node holds. */
async function onDisks(dirs: string[], repoId: string): Promise<{ distinct: Map<string, number>; perNode: number[] }> {
  const distinct = new Map<string, number>();
  const perNode: number[] = [];
  for (const dir of dirs) {
    let sum = 0;
    for (const f of await segmentFiles(dir)) {
      const at = f.indexOf(`/segments/${repoId}/`);
      if (at < 0) continue;
      const size = await stat(f).then((s) => s.size, () => null);
      if (size === null) continue; // unlinked between the listing and the stat
      sum += size;
      distinct.set(f.slice(at), size);
    }
    perNode.push(sum);
  }
  return { distinct, perNode };
}

const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

async function sizesOn(nodes: TestNode[]): Promise<{ compressed: number; uncompressed: number; ingestBytes: number; ingestEvents: number }[]> {
  return Promise.all(
    nodes.map(async (n) => {
      const r = (await mustGql(n.url, n.adminToken, '{ repository(name: "sized") { compressedByteSize uncompressedByteSize ingestVolumeByDay { date ingestBytes eventCount } } }')).repository;
      const days = r.ingestVolumeByDay as { ingestBytes: number; eventCount: number }[];
      return { compressed: r.compressedByteSize, uncompressed: r.uncompressedByteSize, ingestBytes: days.reduce((a, d) => a + d.ingestBytes, 0), ingestEvents: days.reduce((a, d) => a + d.eventCount, 0) };
    }),
  );
}

const same = <T>(xs: T[]): boolean => xs.every((x) => JSON.stringify(x) === JSON.stringify(xs[0]));

t.test('a storage-size limit holds for the cluster as a whole, and sizes agree on every node', async (t) => {
  const cluster = await startCluster(t, { nodes: 3, partitions: 6, extra: '[retention]\ninterval_seconds = 1\n' });
  const nodes = cluster.nodes.map((h) => h.node);
  const dirs = cluster.nodes.map((h) => h.dataDir);
  await waitForAlive(nodes, [1, 2, 3], 60_000);
  const [n1, n2] = nodes as [TestNode, TestNode, TestNode];

  const repo = await createRepo(n1.url, n1.adminToken, 'sized');
  // Each batch is its own datasource (so its own segments), an hour newer than the one before.
  const now = Date.now();
  for (let b = 0; b < BATCHES; b++) {
    const ts = now - (BATCHES - b) * HOUR;
    const events = Array.from({ length: PER_BATCH }, (_, i) => ({ timestamp: ts + i, rawstring: `sized batch ${b} event ${i} ${'p'.repeat(60 + ((b * 7 + i) % 40))}`, attributes: { b }, tags: { batch: `b${b}` } }));
    await ingestStructured(n1.url, repo.ingestToken, events);
  }
  await until('every event searchable', () => countOf(n1.url, 'sized', n1.adminToken, '', ALL_TIME), (n) => n === BATCHES * PER_BATCH);
  await until('every segment closed, listed and held twice', () => replicationStatus(n1), (s) => s.segments >= BATCHES && s.underReplicated === 0 && s.pendingOwn === 0, 120_000);

  const before = await until('the same sizes on every node, matching the distinct files on disk', async () => ({ sizes: await sizesOn(nodes), disk: await onDisks(dirs, repo.id) }), (v) => same(v.sizes) && v.sizes[0]!.compressed === total(v.disk.distinct) && v.sizes[0]!.ingestEvents === BATCHES * PER_BATCH, 120_000);
  const S = before.sizes[0]!.compressed;
  t.ok(S > 0 && before.sizes[0]!.uncompressed > 0, `compressedByteSize ${S}, uncompressedByteSize ${before.sizes[0]!.uncompressed}, the same on the three nodes`);
  t.ok(before.disk.perNode.reduce((a, b) => a + b, 0) > S * 1.5, `the copies on disk (${before.disk.perNode.join(' + ')}) are not counted twice in the size`);
  t.equal(before.sizes[0]!.ingestEvents, BATCHES * PER_BATCH, 'the ingest volume counts every event once, on every node');
  t.ok(before.sizes[0]!.ingestBytes > 0);

  // Room for about 40% of the data: the oldest go until the cluster's distinct segments fit.
  const limit = Math.floor(S * 0.4);
  await mustGql(n2.url, n2.adminToken, 'mutation($g: Float!) { updateRetention(repositoryName: "sized", storageSizeBasedRetention: $g) { repository { name } } }', { g: limit / 1e9 });
  const after = await until(
    'the distinct segment files on all disks within the limit, and the sizes agreeing',
    async () => ({ sizes: await sizesOn(nodes), disk: await onDisks(dirs, repo.id) }),
    (v) => total(v.disk.distinct) <= limit && same(v.sizes.map((s) => s.compressed)) && v.sizes[0]!.compressed === total(v.disk.distinct),
    120_000,
  );
  const kept = total(after.disk.distinct);
  t.ok(kept <= limit, `the cluster keeps ${kept} bytes of segments, within the ${limit}-byte limit`);
  t.ok(kept > limit * 0.5, `and does not delete far more than needed (${kept} of ${limit})`);
  t.equal(after.sizes[0]!.compressed, kept, 'compressedByteSize is what is left, on every node');

  // The newest data is what stays: the count by batch is a run of the newest batches.
  const left = await countOf(n1.url, 'sized', n1.adminToken, '', ALL_TIME);
  t.ok(left > 0 && left < BATCHES * PER_BATCH, `${left} events left`);
  const rows = (await mustGql(n1.url, n1.adminToken, '{ repository(name: "sized") { name } }')).repository;
  t.equal(rows.name, 'sized');
  const newest = await countOf(n1.url, 'sized', n1.adminToken, `b=${BATCHES - 1}`, ALL_TIME);
  t.equal(newest, PER_BATCH, 'the newest batch is kept whole');
  const oldest = await countOf(n1.url, 'sized', n1.adminToken, 'b=0', ALL_TIME);
  t.equal(oldest, 0, 'the oldest batch is gone');
  for (const n of nodes) t.equal(await countOf(n.url, 'sized', n.adminToken, '', ALL_TIME), left, `every node answers ${left} events`);
  const again = await sizesOn(nodes);
  t.ok(same(again.map((s) => s.ingestEvents)) && again[0]!.ingestEvents === BATCHES * PER_BATCH, 'the ingest volume counts what arrived, not what is left');

  // Groups and roles are global state: granted on one node, they hold on every node.
  const n3 = nodes[2]!;
  const gus = await createUser(n1.url, n1.adminToken, 'gus');
  const role = (await mustGql(n1.url, n1.adminToken, 'mutation { createRole(input: {displayName: "reader", viewPermissions: [ReadAccess]}) { role { id } } }')).createRole.role.id;
  const group = (await mustGql(n2.url, n2.adminToken, 'mutation { addGroup(displayName: "readers") { group { id } } }')).addGroup.group.id;
  await mustGql(n2.url, n2.adminToken, 'mutation($g: String!, $u: String!) { addUsersToGroup(input: {groupId: $g, users: [$u]}) { group { userCount } } }', { g: group, u: gus.id });
  await mustGql(n1.url, n1.adminToken, 'mutation($g: String!, $r: String!) { assignRoleToGroup(input: {viewId: "sized", groupId: $g, roleId: $r}) { group { role { id } } } }', { g: group, r: role });
  const gusCount = async (): Promise<number | string> => {
    const r = await api(n3.url, '/api/v1/repositories/sized/query', { token: gus.token, headers: { accept: 'application/json' }, body: JSON.stringify({ queryString: 'count()', ...ALL_TIME }) });
    return r.status === 200 ? Number(r.json()[0]._count) : `HTTP ${r.status}`;
  };
  t.equal(await until('the grant seen on node 3', gusCount, (v) => v === left), left, 'a group member searches the repository on another node');
  await mustGql(n1.url, n1.adminToken, 'mutation($g: String!, $u: String!) { removeUsersFromGroup(input: {groupId: $g, users: [$u]}) { group { userCount } } }', { g: group, u: gus.id });
  t.equal(await until('the removal seen on node 3', gusCount, (v) => v === 'HTTP 404'), 'HTTP 404', 'and loses it there once out of the group');
});
