/**
 * Live streams at their start boundary, on a real two-node cluster under load (docs/cluster.md,
 * "Search across nodes"): a live query is answered by a historical part (segments and digest memory
 * on every node, as each node reads them when the query reaches it) and a live part (records read
 * straight from Kafka from the moment the query registered). Events ingested around the start can
 * fall into both. This test counts each id in several live streams opened mid-load; it is a todo
 * (it fails today: 10 and 265 ids twice in two of six streams, first run) until the boundary is
 * built: a per-partition start offset for the live part, and a historical part cut at it
 * (src/query: QueryService.follow and the scan's sources; docs/cluster.md, "Search across nodes").
 */
import t from 'tap';
import { startCluster, waitForAlive } from '../helpers/cluster.js';
import { api } from '../helpers/http.js';
import { createRepo, openNdjsonStream, sleep } from '../helpers/query.js';

t.setTimeout(300_000);

t.test('each event once in a live stream opened under load', { todo: 'the live/historical boundary needs src/query (QueryService.follow, the scan sources)' }, async (t) => {
  const c = await startCluster(t, { nodes: 2, partitions: 2, extra: '[self_logs]\nenabled = false\n' });
  const [n1, n2] = [c.node(1), c.node(2)];
  await waitForAlive([n1, n2], [1, 2]);
  const repo = await createRepo(n1.url, n1.adminToken, 'live');
  let seq = 0;
  let stop = false;
  const client = async (k: number): Promise<void> => {
    while (!stop) {
      const ids = Array.from({ length: 5 }, () => `e${++seq}`);
      const body = JSON.stringify([{ tags: { client: String(k) }, events: ids.map((id) => ({ timestamp: Date.now(), attributes: { uid: id }, rawstring: `event ${id}` })) }]);
      await api([n1, n2][(seq + k) % 2]!.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body }).catch(() => undefined);
      await sleep(20);
    }
  };
  const clients = [0, 1].map((k) => client(k));
  await sleep(3000);
  // A stream already following keeps the node's Kafka tail running (the tail is shared).
  const keeper = await openNdjsonStream(n1.url, 'live', n1.adminToken, { queryString: 'uid=*', isLive: true, start: '1m' }, 120_000);
  const doubled: string[] = [];
  for (let i = 0; i < 6; i++) {
    const n = [n1, n2][i % 2]!;
    const s = await openNdjsonStream(n.url, 'live', n.adminToken, { queryString: 'uid=*', isLive: true, start: '10m' }, 60_000);
    const got = await s.collectFor(4000);
    await s.close();
    const counts = new Map<string, number>();
    for (const e of got) if (typeof e.uid === 'string') counts.set(e.uid, (counts.get(e.uid) ?? 0) + 1);
    const twice = [...counts].filter(([, k]) => k > 1).map(([id]) => id);
    t.comment(`stream ${i} on node ${(i % 2) + 1}: ${got.length} events, ${counts.size} ids, ${twice.length} twice`);
    doubled.push(...twice);
  }
  await keeper.close();
  stop = true;
  await Promise.all(clients);
  t.same(doubled, [], 'no event twice in any stream');
});
