/**
 * Issue 24 on a real cluster (3 nodes, Kafka, segment replication factor 2): a node being stopped
 * takes no new work from the start of its stop: every new query and ingest it is sent (on a
 * keep-alive connection opened before, since its listener may already be closed) is answered 503 +
 * Retry-After naming that it is stopping, never a partial answer of its own. Meanwhile the other
 * nodes answer every query completely or with the product's missing-segments warning (the stopping
 * node refuses their query parts; never silently partial); once it is gone they answer completely,
 * the events it acknowledged while stopping included, and their /api/v1/status still answers.
 */
import t from 'tap';
import { startCluster, waitForAlive } from '../helpers/cluster.js';
import { api } from '../helpers/http.js';
import { createRepo, runJob, sleep } from '../helpers/query.js';
import { RawConnection } from '../helpers/raw-http.js';

t.setTimeout(420_000);

t.test('a stopping cluster node refuses new queries and ingest; its peers answer completely or warn', async (t) => {
  const c = await startCluster(t, { nodes: 3, partitions: 6, clusterExtra: 'segment_replication_factor = 2' });
  const [n1, n2, n3] = [c.node(1), c.node(2), c.node(3)];
  await waitForAlive([n1, n2, n3], [1, 2, 3]);
  const repo = await createRepo(n1.url, n1.adminToken, 'stopping');
  // Ingested through every node, so each digests some of it.
  const N = 600;
  for (let b = 0; b < N / 100; b++) {
    const n = [n1, n2, n3][b % 3]!;
    const body = JSON.stringify([{ tags: { batch: String(b) }, events: Array.from({ length: 100 }, (_, i) => ({ timestamp: Date.now() - 60_000 + i, attributes: { k: `${b}-${i}` }, rawstring: `event ${b}-${i}` })) }]);
    const res = await api(n.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body });
    t.equal(res.status, 200, res.text);
  }
  const count = async (n: typeof n1): Promise<{ count: number; warnings: string[] }> => {
    const job = await runJob(n.url, 'stopping', n.adminToken, { queryString: 'count(as=c)', start: '1d' });
    return { count: Number(job.final.events[0]?.c ?? 0), warnings: (job.final.metaData?.warnings as string[] | undefined) ?? [] };
  };
  for (const n of [n1, n2, n3]) {
    const deadline = Date.now() + 60_000;
    let got = await count(n);
    while ((got.count !== N || got.warnings.length > 0) && Date.now() < deadline) {
      await sleep(500);
      got = await count(n);
    }
    t.same(got, { count: N, warnings: [] }, `${n.url} answers every event before the stop`);
  }

  const ingestHeaders = { authorization: `Bearer ${repo.ingestToken}`, 'content-type': 'application/json' };
  const headers = { authorization: `Bearer ${n2.adminToken}`, 'content-type': 'application/json', accept: 'application/json' };
    const queryBody = JSON.stringify({ queryString: 'count()', start: '1d' });
  const ka = await RawConnection.open(n2.url);
  const first = await ka.request('POST', '/api/v1/repositories/stopping/query', headers, queryBody);
  t.equal(first.status, 200, `node 2 answers before its stop: ${first.body}`);

  // In flight when the stop begins (an ingest whose body is half sent): it holds node 2's HTTP
  // drain open, after its membership stopped, which is when it used to answer partially.
  const slowBody = Buffer.from(JSON.stringify([{ tags: { batch: 'slow' }, events: Array.from({ length: 50 }, (_, i) => ({ timestamp: Date.now() - 30_000 + i, attributes: { k: `slow-${i}` }, rawstring: `slow ${i}` })) }]));
  const slow = await RawConnection.open(n2.url);
  slow.send('POST', '/api/v1/ingest/humio-structured', ingestHeaders, slowBody, slowBody.length >> 1);
  await sleep(200);

  const outcome = n2.stopOutcome();
  let seen = '';
  for (let i = 0; i < 400 && !/DOWN/.test(seen); i++) {
    const s = await ka.request('GET', '/api/v1/status', {});
    seen = `${s.status} ${s.body}`;
    if (!/DOWN/.test(seen)) await sleep(25);
  }
  t.match(seen, /^503 .*DOWN/, 'node 2 says it is down while it stops');

  // While node 2 stops: what it answers on the old connection, and what the others answer.
  const stopped = outcome.then(() => true);
  const fromStopping: string[] = [];
  const silentPartials: string[] = [];
  let peerAnswers = 0;
  const onStopping = (async () => {
    let done = false;
    void stopped.then(() => (done = true));
    // Two seconds of new requests, then the in-flight one is finished (the drain waits up to 5 s).
    const until = Date.now() + 2000;
    while (!done && Date.now() < until) {
      try {
        const q = await ka.request('POST', '/api/v1/repositories/stopping/query', headers, queryBody);
        fromStopping.push(`${q.status} retry-after=${q.headers.get('retry-after') ?? '-'} ${q.body.trim()}`);
        const i = await ka.request('POST', '/api/v1/ingest/humio-structured', ingestHeaders, JSON.stringify([{ tags: { batch: 'late' }, events: [{ timestamp: Date.now(), attributes: {}, rawstring: 'late' }] }]));
        fromStopping.push(`${i.status} retry-after=${i.headers.get('retry-after') ?? '-'} ${i.body.trim()}`);
      } catch {
        break; // the connection closed as the node went away
      }
      await sleep(100);
    }
  })();
  const onPeers = (async () => {
    let done = false;
    void stopped.then(() => (done = true));
    while (!done) {
      for (const n of [n1, n3]) {
        const got = await count(n);
        peerAnswers++;
        // N, or N + 50 once the slow ingest in flight is durable (it may be acknowledged while
        // node 2 is still stopping); anything else is a silent partial (or a double count).
        if (got.count !== N && got.count !== N + 50 && got.warnings.length === 0) silentPartials.push(`${n.url}: ${got.count} of ${N} (or ${N + 50}) without a warning`);
        if (got.count > N + 50) silentPartials.push(`${n.url}: ${got.count}, more than the ${N + 50} ever sent`);
      }
    }
  })();
  await onStopping;
  slow.write(slowBody.subarray(slowBody.length >> 1));
  const acked = await slow.read().catch((err: unknown) => ({ status: 0, body: String(err) }));
  t.equal(acked.status, 200, `the ingest in flight when the stop began is finished: ${acked.body}`);
  const o = await outcome;
  await onPeers;
  ka.close();
  slow.close();
  // Bounded and honest: exit 0, or 1 naming a step left behind past its bound; never killed, and
  // never 70 (seen once: a digest task cut off by the pools closing was taken for lost durability;
  // docs/hardening.md).
  t.notOk(o.killedByTest, o.describe);
  t.not(o.code, 70, o.describe);
  t.ok(o.code === 0 || (o.code === 1 && /not cleanly: .*after its bound/.test(n2.stderr())), o.describe);
  t.ok(fromStopping.length >= 2, `node 2 was asked during its stop (${fromStopping.length} answers)`);
  t.same(
    fromStopping.filter((a) => !/^503 retry-after=\d+ this node is stopping \(shutting down\) and takes no new (queries|ingest)/.test(a)),
    [],
    'every new query and ingest sent to the stopping node was refused 503 + Retry-After naming the stop',
  );
  t.ok(peerAnswers >= 2, `the other nodes answered ${peerAnswers} queries during the stop`);
  t.same(silentPartials, [], 'no peer answered partially without saying so');

  // Node 2 gone: factor 2 leaves every segment on a live node.
  await waitForAlive([n1, n3], [1, 3]);
  for (const n of [n1, n3]) {
    const deadline = Date.now() + 60_000;
    let got = await count(n);
    while ((got.count !== N + 50 || got.warnings.length > 0) && Date.now() < deadline) {
      await sleep(500);
      got = await count(n);
    }
    t.same(got, { count: N + 50, warnings: [] }, `${n.url} answers every event after node 2 left, the 50 it acknowledged while stopping too`);
    t.equal((await api(n.url, '/api/v1/status')).status, 200);
  }
});
