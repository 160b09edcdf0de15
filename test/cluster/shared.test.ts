/**
 * One three-node cluster on a real broker: what is created on one node is visible and usable on the
 * others, conflicting creates resolve to one, queries agree on every node (query jobs and live
 * streams too), every event stays searchable through a handover, and a holder that is down makes
 * the answer say it is partial.
 */
import t from 'tap';
import { startCluster, waitForAlive, waitReportedToEnd } from '../helpers/cluster.js';
import { api, createUser, gql } from '../helpers/http.js';
import { uploadFile } from '../helpers/files.js';
import { createAlert } from '../helpers/alerts.js';
import { countOf, createRepo, ingestStructured, openNdjsonStream, queryJson, runJob, sleep } from '../helpers/query.js';

// A broker and several nodes start here: more than tap's default per-file timeout on a busy machine.
t.setTimeout(400_000);

t.test('a three-node cluster behaves as one service', async (t) => {
  // One copy of each segment: a node that is down takes its data with it (the warning is the point here).
  const c = await startCluster(t, { nodes: 3, partitions: 6, clusterExtra: 'segment_replication_factor = 1' });
  const [n1, n2, n3] = [c.node(1), c.node(2), c.node(3)];
  await waitForAlive([n1, n2, n3], [1, 2, 3]);

  // --- global state ---
  const repo = await createRepo(n1.url, n1.adminToken, 'shared');
  const alice = await createUser(n2.url, n2.adminToken, 'alice');
  const added = await gql(n3.url, n3.adminToken, 'mutation { addMember(searchDomainName: "shared", username: "alice") { clientMutationId } }');
  t.same(added.errors, undefined, 'a membership made on node 3 for a user made on node 2 and a repository made on node 1');
  const parser = await gql(n2.url, n2.adminToken, 'mutation($i: CreateParserInputV2!) { createParserV2(input: $i) { name } }', {
    i: { name: 'kvp', repositoryName: 'shared', script: 'kvParse()', testCases: [], fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [] },
  });
  t.same(parser.errors, undefined, 'a parser saved on node 2');
  const up = await uploadFile(n3.url, '/api/v1/repositories/shared/files', n3.adminToken, 'codes.csv', 'status,meaning\n200,ok\n404,missing\n');
  t.equal(up.status, 200, 'a lookup file uploaded on node 3');
  const hook = await gql(n1.url, n1.adminToken, 'mutation { createWebhookAction(input: {viewName: "shared", name: "h", url: "https://hooks.example.com/x", method: "POST", headers: [], bodyTemplate: "{}", ignoreSSL: false, useProxy: false}) { id } }');
  const alert = await createAlert(n2.url, n2.adminToken, 'shared', { name: 'errors', query: { queryString: 'status=500', start: '5m' }, notifiers: [hook.data.createWebhookAction.id], silenced: true });
  t.ok(alert.id, 'an alert made on node 2 with an action made on node 1');
  for (const n of [n1, n2, n3]) {
    const r = await gql(n.url, n.adminToken, '{ searchDomain(name: "shared") { name } parsers: repository(name: "shared") { parsers { name } } }');
    t.equal(r.data?.searchDomain?.name, 'shared', `repository visible on ${n.url}`);
    t.ok((r.data?.parsers?.parsers as { name: string }[]).some((p) => p.name === 'kvp'), `parser visible on ${n.url}`);
    const alerts = await api(n.url, '/api/v1/repositories/shared/alerts', { token: n.adminToken, method: 'GET' });
    t.match(alerts.text, /"errors"/, `alert visible on ${n.url}`);
  }
  const aliceQuery = await api(n3.url, '/api/v1/repositories/shared/query', { token: alice.token, body: JSON.stringify({ queryString: 'count()' }), headers: { accept: 'application/json' } });
  t.equal(aliceQuery.status, 200, "alice's token (made on node 2) works on node 3");

  const racing = await Promise.all([n1, n2, n3].map((n) => gql(n.url, n.adminToken, 'mutation { createRepository(name: "race") { repository { name } } }')));
  t.equal(racing.filter((r) => r.errors === undefined).length, 1, 'three racing creates of one repository: one wins');
  t.ok(racing.filter((r) => r.errors !== undefined).every((r) => /already exists/.test(JSON.stringify(r.errors))), 'the others are told it already exists');

  // --- data through every node, queries on every node ---
  const now = Date.now();
  const events = Array.from({ length: 300 }, (_, i) => ({ timestamp: now - i * 10, rawstring: `status=${i % 3 === 0 ? 404 : 200} n=${i}`, attributes: { status: i % 3 === 0 ? 404 : 200, n: i }, tags: { host: `h${i % 3}` } }));
  // Requests of 5, each in a random partition: node 2 (first host of 2 of the 6) then holds some of
  // the repository's segments, so with it down (factor 1) the answer is partial below. With 8
  // requests in all (6 of 50 and the 2 markers) none landed there in (2/3)^8 = 3.9 % of runs, and
  // then the answer was partial only if asked while a takeover of its partitions was under way
  // (peer-queries.ts `unreachable`); with 62 requests, (2/3)^62 < 1e-10.
  await ingestStructured(n1.url, repo.ingestToken, events.slice(0, 100), 5);
  await ingestStructured(n2.url, repo.ingestToken, events.slice(100, 200), 5);
  await ingestStructured(n3.url, repo.ingestToken, events.slice(200), 5);
  const answers: string[] = [];
  for (const n of [n1, n2, n3]) {
    const deadline = Date.now() + 60_000;
    while ((await countOf(n.url, 'shared', n.adminToken)) < 300 && Date.now() < deadline) await sleep(200);
    const rows = await queryJson(n.url, 'shared', { queryString: 'match(file="codes.csv", field=status) | groupBy(meaning)' }, { token: n.adminToken });
    answers.push(JSON.stringify(rows.map((r) => [r.meaning, r._count]).sort()));
    const job = await runJob(n.url, 'shared', n.adminToken, { queryString: 'status=404 | count()' });
    t.same(job.final.events, [{ _count: '100' }], `query job on ${n.url}`);
    // A filter query on /query streams every event, the peers' parts included (not tail(200)).
    const all = await queryJson(n.url, 'shared', { queryString: 'n=*' }, { token: n.adminToken });
    t.equal(new Set(all.map((r) => r.n)).size, 300, `/query on ${n.url}: all 300 events, each once (${all.length} rows)`);
    t.equal(all.length, 300);
  }
  t.same(answers[0], JSON.stringify([['missing', '100'], ['ok', '200']]), 'the lookup file uploaded on node 3 is used on node 1');
  t.equal(new Set(answers).size, 1, 'every node gives the same answer');

  // A live stream on node 3 sees an event ingested through node 1 (the stream's first bytes are
  // its historical part: one old marker, so the response starts before the new one is sent).
  await ingestStructured(n2.url, repo.ingestToken, [{ timestamp: Date.now(), rawstring: 'marker old', attributes: {}, tags: { host: 'h9' } }]);
  await sleep(1500);
  const live = await openNdjsonStream(n3.url, 'shared', n3.adminToken, { queryString: 'marker', isLive: true, start: '1m' }, 30_000);
  await sleep(1500);
  await ingestStructured(n1.url, repo.ingestToken, [{ timestamp: Date.now(), rawstring: 'marker live', attributes: {}, tags: { host: 'h9' } }]);
  let seen: Record<string, any> | null = null;
  for (let i = 0; i < 20 && seen === null; i++) {
    const e = await live.next(1000);
    if (e !== null && /marker live/.test(String(e['@rawstring']))) seen = e;
  }
  t.ok(seen, 'the live stream on node 3 got the event ingested on node 1');
  await live.close();

  // --- handover latency: node 2 restarts while events keep coming ---
  await waitReportedToEnd(c, n1); // every block in a segment, listed (the checkpoints passed them)
  await c.node(2).kill();
  await waitForAlive([n1, n3], [1, 3]);
  const job = await runJob(n1.url, 'shared', n1.adminToken, { queryString: 'count()' });
  t.ok((job.final.metaData?.warnings as string[] | undefined)?.some((w) => /Segment files missing, partial results/.test(w)), 'with node 2 down, the answer says it is partial');
  const restarting = c.restart(2);
  const latencies: number[] = [];
  for (let i = 0; i < 25; i++) {
    const tag = `lat${i}`;
    const acked = Date.now();
    await ingestStructured(n1.url, repo.ingestToken, [{ timestamp: Date.now(), rawstring: tag, attributes: {}, tags: { host: 'lat' } }]);
    while ((await countOf(n1.url, 'shared', n1.adminToken, tag)) < 1) {
      if (Date.now() - acked > 30_000) break;
      await sleep(100);
    }
    latencies.push(Date.now() - acked);
    await sleep(300);
  }
  const n2b = await restarting;
  await waitForAlive([n1, n2b, n3], [1, 2, 3]);
  // Every event became searchable while its partition was taken over and handed back (the wait
  // above gives up at 30 s: a stall, not slowness on a busy machine). How fast is bench/cluster's.
  t.ok(Math.max(...latencies) < 30_000, `every event searchable through the restart and handover (max latency ${Math.max(...latencies)} ms)`);
  // Node 2 answers its part once it has caught up with global state; until then the answer says it
  // is partial (honestly), so ask until it is whole (bounded).
  let after = await runJob(n1.url, 'shared', n1.adminToken, { queryString: 'count()' });
  for (const deadline = Date.now() + 60_000; (after.final.metaData?.warnings as string[] | undefined ?? []).length > 0 && Date.now() < deadline; ) {
    await sleep(500);
    after = await runJob(n1.url, 'shared', n1.adminToken, { queryString: 'count()' });
  }
  t.same(after.final.metaData?.warnings ?? [], [], 'node 2 back: no warning');
  t.same(after.final.events, [{ _count: String(300 + 2 + 25) }], 'and everything counted once');
});
