/**
 * Issue 24 (hardening, the bounded stop): a node that is stopping takes no new work. From the start
 * of its stop (SIGTERM) a new query or ingest request is answered 503 + Retry-After naming that the
 * node is stopping (E_NODE_STOPPING), on a keep-alive connection opened before the stop (the listener
 * may already be closed to new ones), while a request that was in flight when the stop began (an
 * ingest whose body is still arriving) is finished and acknowledged, and the node exits 0 within its
 * bound. After a restart every acknowledged event is there and /api/v1/status answers.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createRepo, ingestStructured, sleep } from '../helpers/query.js';
import { RawConnection } from '../helpers/raw-http.js';

t.setTimeout(240_000);

const event = (i: number): unknown => ({ timestamp: Date.now() - 1000 + i, rawstring: `in-flight ${i}`, attributes: { i } });

t.test('a stopping node refuses new queries and ingest with 503 + Retry-After and finishes what was in flight', async (t) => {
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'stopping');
  await ingestStructured(node.url, repo.ingestToken, Array.from({ length: 10 }, (_, i) => ({ timestamp: Date.now() - 5000 + i, rawstring: `before ${i}`, attributes: { i }, tags: { host: 'h' } })));
  t.equal(await countOf(node.url, 'stopping', node.adminToken), 10);

  const ingestHeaders = { authorization: `Bearer ${repo.ingestToken}`, 'content-type': 'application/json' };
  const queryHeaders = { authorization: `Bearer ${node.adminToken}`, 'content-type': 'application/json', accept: 'application/json' };
  const queryBody = JSON.stringify({ queryString: 'count()', start: '1d' });

  // In flight when the stop begins: an ingest request whose body is half sent.
  const slowBody = Buffer.from(JSON.stringify([{ tags: { host: 'h' }, events: Array.from({ length: 50 }, (_, i) => event(i)) }]));
  const slow = await RawConnection.open(node.url);
  slow.send('POST', '/api/v1/ingest/humio-structured', ingestHeaders, slowBody, slowBody.length >> 1);
  // A keep-alive connection opened (and used) before the stop: it answers queries now.
  const ka = await RawConnection.open(node.url);
  const before = await ka.request('POST', '/api/v1/repositories/stopping/query', queryHeaders, queryBody);
  t.equal(before.status, 200, `a query before the stop: ${before.body}`);

  const outcome = node.stopOutcome();
  // The stop has begun once the status says so (the same connection).
  let seen = '';
  for (let i = 0; i < 200 && !/shutting down|DOWN/.test(seen); i++) {
    const s = await ka.request('GET', '/api/v1/status', {});
    seen = `${s.status} ${s.body}`;
    if (!/DOWN/.test(seen)) await sleep(25);
  }
  t.match(seen, /^503 .*DOWN/, 'the status says the node is down while it stops');

  const q = await ka.request('POST', '/api/v1/repositories/stopping/query', queryHeaders, queryBody);
  t.equal(q.status, 503, `a new query during the stop: ${q.body}`);
  t.match(q.body, /node is stopping/);
  t.ok(Number(q.headers.get('retry-after')) > 0, `Retry-After: ${q.headers.get('retry-after')}`);
  const job = await ka.request('POST', '/api/v1/repositories/stopping/queryjobs', queryHeaders, queryBody);
  t.equal(job.status, 503, `a new query job during the stop: ${job.body}`);
  t.match(job.body, /node is stopping/);
  const ing = await ka.request('POST', '/api/v1/ingest/humio-structured', ingestHeaders, JSON.stringify([{ tags: { host: 'h' }, events: [event(99)] }]));
  t.equal(ing.status, 503, `new ingest during the stop: ${ing.body}`);
  t.match(ing.body, /node is stopping \(shutting down\) and takes no new ingest/);
  t.ok(Number(ing.headers.get('retry-after')) > 0);

  // The request in flight since before the stop is finished and acknowledged.
  slow.write(slowBody.subarray(slowBody.length >> 1));
  const acked = await slow.read();
  t.equal(acked.status, 200, `the in-flight ingest: ${acked.body}`);
  ka.close();
  slow.close();

  const o = await outcome;
  t.equal(o.code, 0, o.describe);
  t.notOk(o.killedByTest, o.describe);

  // Every acknowledged event is there after a restart; the refused one is not.
  const again = await startNode(t, { dataDir: node.dataDir });
  t.equal(await countOf(again.url, 'stopping', again.adminToken), 60, '10 before + 50 acknowledged in flight');
  t.equal((await api(again.url, '/api/v1/status')).status, 200);
});
