/**
 * Extra segment copies are deleted (docs/replication.md, "Surplus copies"), on a real cluster: three
 * nodes, factor 2. A node is killed; once it has been dead longer than rereplicate_after_seconds its
 * segments are copied to a substitute. It comes back: the substitute's copies are now surplus (the
 * segment's desired holders hold it again), so they are dropped from global state and their files
 * deleted after the grace, freeing disk, while the holder count never falls below the factor and
 * every query still answers in full on every node, without a warning. Void files the kill and the
 * handovers left are deleted too: once settled, the disks hold exactly the listed copies.
 */
import t from 'tap';
import { filesOnDisk, filesSettled, startCluster, waitFor as until, waitForAlive, replicationStatus, type ClusterNodeHandle } from '../helpers/cluster.js';
import { api } from '../helpers/http.js';
import { createRepo, runJob, sleep } from '../helpers/query.js';
import type { TestNode } from '../helpers/node-process.js';

t.setTimeout(600_000);

const segmentFiles = async (h: ClusterNodeHandle): Promise<number> => (await filesOnDisk(h)).segments;

async function ledger(n: TestNode): Promise<{ count: number; distinct: number; warnings: string[] }> {
  const a = await runJob(n.url, 'surplus', n.adminToken, { queryString: 'count(as=c)', start: '1d' });
  const b = await runJob(n.url, 'surplus', n.adminToken, { queryString: 'count(uid, distinct=true, as=d)', start: '1d' });
  const warnings = [...((a.final.metaData?.warnings as string[] | undefined) ?? []), ...((b.final.metaData?.warnings as string[] | undefined) ?? [])];
  return { count: Number(a.final.events[0]?.c ?? 0), distinct: Number(b.final.events[0]?.d ?? 0), warnings };
}

t.test('a substitute holder deletes its copies once the original holder is back', async (t) => {
  // No self logs: every segment on disk and in global state is the ledger's.
  const c = await startCluster(t, { nodes: 3, partitions: 3, clusterExtra: 'segment_replication_factor = 2\nrereplicate_after_seconds = 3', extra: '[self_logs]\nenabled = false\n' });
  const [n1, n2, n3] = [c.node(1), c.node(2), c.node(3)];
  await waitForAlive([n1, n2, n3], [1, 2, 3]);
  const repo = await createRepo(n1.url, n1.adminToken, 'surplus');
  const N = 3000;
  // Each request lands in a random partition; node 2 must hold some segment (of partitions 0 or 1)
  // for its death to leave copies to make and then surplus ones: in 30 requests of 100 all miss
  // them with odds 3^-30 (in 6 of 500, 3^-6 = 0.14 %, and the surplus check failed).
  for (let i = 0; i < N; i += 500) {
    for (let j = i; j < i + 500; j += 100) {
      const body = JSON.stringify([{ tags: { src: 'ledger' }, events: Array.from({ length: 100 }, (_, k) => ({ timestamp: Date.now(), attributes: { uid: `e${j + k}` }, rawstring: `event e${j + k}` })) }]);
      const res = await api([n1, n2, n3][(i / 500) % 3]!.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body });
      t.equal(res.status, 200, 'ingest acknowledged');
    }
    await sleep(1500); // segments close at the flush interval: several segments per partition
  }
  // Everything listed and held by exactly two nodes.
  const first = await until('every segment held by two nodes', async () => {
    const r = await replicationStatus(n1);
    const held = r.nodes.reduce((a, x) => a + x.segments, 0);
    const events = r.nodes.reduce((a, x) => a + x.events, 0);
    return r.segments > 0 && r.underReplicated === 0 && held === 2 * r.segments && events === 2 * N ? r : null;
  }, 120_000);
  let segments = first.segments;
  t.pass(`${segments} segments, each on two nodes`);

  // Node 2 dies; past rereplicate_after_seconds its segments are copied to nodes 1 and 3.
  await n2.kill();
  await waitForAlive([n1, n3], [1, 3]);
  // The new owners of node 2's partitions may write a segment more (what node 2 digested past the
  // last checkpoint it reported is digested again), so the count is read again here.
  let seen = '';
  const whileDead = await until('nodes 1 and 3 hold every segment', async () => {
    const r = await replicationStatus(n1);
    const of = (id: number): number => r.nodes.find((x) => x.node === id)?.segments ?? 0;
    const onDisk = (await segmentFiles(c.nodes[0]!)) + (await segmentFiles(c.nodes[2]!));
    seen = `${JSON.stringify(r)}; files on nodes 1 and 3: ${onDisk}`;
    if (!(r.segments >= segments && r.underReplicated === 0 && of(1) === r.segments && of(3) === r.segments)) return null;
    return onDisk >= 2 * r.segments ? { r, onDisk } : null;
  }, 180_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; last seen: ${seen}`);
  });
  segments = whileDead.r.segments;
  t.pass(`nodes 1 and 3 hold a file of every segment (${segments})`);

  // Node 2 returns with its copies: the substitutes' extra copies are dropped, then deleted, and so
  // are the void files the kill and the handovers back left (leftovers.ts): in the end every node
  // holds on disk exactly the files global state lists it as holding.
  const back = await c.restart(2);
  await waitForAlive([n1, back, n3], [1, 2, 3]);
  const why = { last: '' };
  const settled = await until('the surplus and leftover files deleted from disk', async () => {
    const r = await filesSettled(c, n1, why);
    return r !== null && r.segments >= segments && r.underReplicated === 0 && r.nodes.reduce((a, x) => a + x.segments, 0) === 2 * r.segments ? r : null;
  }, 240_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; last seen: ${why.last}`);
  });
  segments = settled.segments;
  t.equal(settled.nodes.reduce((a, x) => a + x.events, 0), 2 * N, 'every event held twice, no more');
  let files = 0;
  for (const h of c.nodes) files += await segmentFiles(h);
  t.equal(files, 2 * segments, `two files of each segment on disk over the three nodes, none other (${why.last})`);
  const deleted = (await replicationStatus(n1)).surplusDeleted + (await replicationStatus(n3)).surplusDeleted + (await replicationStatus(back)).surplusDeleted;
  t.ok(deleted > 0, `surplus copies deleted (${deleted})`);
  for (const n of [n1, back, n3]) t.same(await ledger(n), { count: N, distinct: N, warnings: [] }, `asked on ${n.url}: the whole ledger once, no warning`);

  // Still safe: with the surplus gone, losing any one node loses no answer.
  await n3.kill();
  await waitForAlive([n1, back], [1, 2]);
  // Its partitions taken over first (until then a dead owner's part is rightly reported missing).
  await until('partitions owned by nodes 1 and 2', async () => {
    const parts = (await api(n1.url, '/api/v1/clusterconfig/digest', { token: n1.adminToken })).json<{ owner: number | null; digesting: boolean }[]>();
    return parts.every((p) => (p.owner === 1 || p.owner === 2) && p.digesting) ? true : null;
  }, 60_000);
  t.same(await ledger(n1), { count: N, distinct: N, warnings: [] }, 'node 3 killed: the whole ledger from nodes 1 and 2, no warning');
});
