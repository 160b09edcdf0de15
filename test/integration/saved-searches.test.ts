/**
 * Saved searches over GraphQL (createSavedQuery / updateSavedQuery / deleteSavedQuery,
 * `savedQueries`) and `$name()` calls in queries of the same repository or view, with parameters,
 * on a real node.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql } from '../helpers/http.js';
import { addMember, countOf, createRepo, ingestStructured, mustGql, runJob, type KnownEvent } from '../helpers/query.js';

t.setTimeout(120_000);

const node = await startNode(t, { config: '[health]\ngrace_period_seconds = 600\n' });
const admin = node.adminToken;
const web = await createRepo(node.url, admin, 'web');
await createRepo(node.url, admin, 'other');
const now = Date.now();
const events: KnownEvent[] = Array.from({ length: 40 }, (_, i) => ({ timestamp: now - 60_000 + i, rawstring: `req ${i}`, attributes: { status: i % 4 === 0 ? '500' : i % 4 === 1 ? '404' : '200', ms: i * 10 }, tags: { host: 'a' } }));
await ingestStructured(node.url, web.ingestToken, events);
const sam = await createUser(node.url, admin, 'sam');
await addMember(node.url, admin, 'web', 'sam');

const CREATE = 'mutation($i: CreateSavedQueryInput!) { createSavedQuery(input: $i) { savedQuery { id name displayName query { queryString start end isLive } } } }';

t.test('create, list, update, delete', async (t) => {
  const created = (await mustGql(node.url, sam.token, CREATE, { i: { viewName: 'web', name: 'errors', queryString: 'status=500' } })).createSavedQuery.savedQuery;
  t.match(created, { name: 'errors', displayName: 'errors', query: { queryString: 'status=500', start: '24h', end: 'now', isLive: false } });
  const list = (await mustGql(node.url, sam.token, '{ repository(name: "web") { savedQueries { id name query { queryString } } } }')).repository.savedQueries;
  t.strictSame(list, [{ id: created.id, name: 'errors', query: { queryString: 'status=500' } }]);
  const dup = await gql(node.url, sam.token, CREATE, { i: { viewName: 'web', name: 'errors', queryString: 'x' } });
  t.match(dup.errors?.[0]?.message, /already exists/);
  const bad = await gql(node.url, sam.token, CREATE, { i: { viewName: 'web', name: 'broken', queryString: 'count(' } });
  t.match(bad.errors?.[0]?.message, /^queryString: /, 'a query that does not compile is refused');
  const outsider = await createUser(node.url, admin, 'olly');
  const denied = await gql(node.url, outsider.token, CREATE, { i: { viewName: 'web', name: 'x', queryString: 'x' } });
  t.match(denied.errors?.[0]?.message, /does not exist or you have no access/);

  const temp = (await mustGql(node.url, sam.token, CREATE, { i: { viewName: 'web', name: 'temp', queryString: 'status=404' } })).createSavedQuery.savedQuery;
  const upd = (await mustGql(node.url, sam.token, 'mutation($i: UpdateSavedQueryInput!) { updateSavedQuery(input: $i) { savedQuery { name query { queryString } } } }', { i: { viewName: 'web', id: temp.id, queryString: 'status=200' } })).updateSavedQuery.savedQuery;
  t.strictSame(upd, { name: 'temp', query: { queryString: 'status=200' } });
  t.equal((await mustGql(node.url, sam.token, 'mutation($i: DeleteSavedQueryInput!) { deleteSavedQuery(input: $i) { result } }', { i: { viewName: 'web', id: temp.id } })).deleteSavedQuery.result, true);
  const gone = await gql(node.url, sam.token, 'query($id: String!) { searchDomain(name: "web") { savedQuery(id: $id) { id } } }', { id: temp.id });
  t.match(gone.errors?.[0]?.message, /does not exist/);
});

t.test('$name() in queries, with parameters, within the repository', async (t) => {
  await mustGql(node.url, admin, CREATE, { i: { viewName: 'web', name: 'Status Is', queryString: 'status=?{code=500}' } });
  await mustGql(node.url, admin, CREATE, { i: { viewName: 'web', name: 'slow', queryString: 'ms > ?min' } });
  t.equal(await countOf(node.url, 'web', sam.token, '$errors()'), 10);
  t.equal(await countOf(node.url, 'web', sam.token, '$"Status Is"()'), 10, 'the parameter default');
  t.equal(await countOf(node.url, 'web', sam.token, '$"Status Is"(code=404)'), 10);
  t.equal(await countOf(node.url, 'web', sam.token, '$slow(min=300) $errors()'), 2, 'two calls combined: 320 and 360');
  const job = await runJob(node.url, 'web', sam.token, { queryString: '$errors() | count()', start: '1h' });
  t.strictSame(job.final.events, [{ _count: '10' }], 'in query jobs');
  const missing = await api(node.url, '/api/v1/repositories/other/query', { token: admin, body: JSON.stringify({ queryString: '$errors()' }) });
  t.equal(missing.status, 400, 'another repository has no such saved search');
  t.match(missing.text, /no saved search named "errors"/);
});

t.test('saved searches of a view', async (t) => {
  await mustGql(node.url, admin, 'mutation { createView(name: "v", connections: [{repositoryName: "web", filter: "status=500 or status=404"}]) { name } }');
  await mustGql(node.url, admin, CREATE, { i: { viewName: 'v', name: 'notfound', queryString: 'status=404' } });
  t.equal(await countOf(node.url, 'v', admin, '$notfound()'), 10);
  const list = (await mustGql(node.url, admin, '{ searchDomain(name: "v") { savedQueries { name } } }')).searchDomain.savedQueries;
  t.strictSame(list, [{ name: 'notfound' }]);
});

t.test('saved searches survive a restart; deleting the repository deletes them', async (t) => {
  t.equal(await node.stop(), 0);
  const again = await startNode(t, { dataDir: node.dataDir, config: '[health]\ngrace_period_seconds = 600\n' });
  t.equal(await countOf(again.url, 'web', again.adminToken, '$errors()'), 10);
  await mustGql(again.url, again.adminToken, 'mutation { deleteSearchDomain(name: "web") { result } }');
  await createRepo(again.url, again.adminToken, 'web');
  const list = (await mustGql(again.url, again.adminToken, '{ repository(name: "web") { savedQueries { name } } }')).repository.savedQueries;
  t.strictSame(list, []);
  t.equal(await again.stop(), 0);
});
