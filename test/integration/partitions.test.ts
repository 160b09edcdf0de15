/**
 * The digest ("ingest") partition layout over REST (GET/POST /api/v1/clusterconfig/ingestpartitions)
 * and GraphQL (`cluster { ingestPartitions }`), against a real node: defaults, a valid raise, every
 * validation rule (400 text/plain naming the rule, stored layout unchanged), permissions, restart.
 */
import t from 'tap';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { api, createUser, gql, type ApiResponse } from '../helpers/http.js';

const PATH = '/api/v1/clusterconfig/ingestpartitions';

type Entry = { partition: number; hosts: number[] };

/** `count` partitions, each on node 1. */
const layoutOf = (count: number): Entry[] => Array.from({ length: count }, (_, i) => ({ partition: i, hosts: [1] }));

const post = (node: TestNode, body: unknown, token = node.adminToken): Promise<ApiResponse> =>
  api(node.url, PATH, { token, body: typeof body === 'string' ? body : JSON.stringify(body) });

const getLayout = async (node: TestNode, token = node.adminToken): Promise<Entry[]> => {
  const res = await api(node.url, PATH, { token });
  if (res.status !== 200) throw new Error(`GET ${PATH}: ${res.status} ${res.text}`);
  return res.json<Entry[]>();
};

const gqlLayout = async (node: TestNode, token = node.adminToken): Promise<Entry[]> => {
  const r = await gql(node.url, token, '{ cluster { ingestPartitions { id nodeIds } } }');
  if (r.errors !== undefined) throw new Error(`GraphQL: ${JSON.stringify(r.errors)}`);
  return (r.data.cluster.ingestPartitions as { id: number; nodeIds: number[] }[]).map((p) => ({ partition: p.id, hosts: p.nodeIds }));
};

t.test('default layout, valid raise, every rule, permissions, GraphQL agreement, restart', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir });

  // --- the default layout: 24 partitions on node 1, readable by the local admin token and a root user.
  const first = await api(node.url, PATH, { token: node.adminToken });
  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), /application\/json/);
  t.same(first.json(), layoutOf(24), 'default layout: 24 partitions, each on node 1');
  t.same(Object.keys(first.json()[0]).sort(), ['hosts', 'partition'], 'wire form is {"partition", "hosts"}');

  const root = await createUser(node.url, node.adminToken, 'rooty', true);
  const plain = await createUser(node.url, node.adminToken, 'plainy', false);
  t.same(await getLayout(node, root.token), layoutOf(24), 'a root user reads the same layout');
  t.same(await gqlLayout(node), layoutOf(24), 'GraphQL agrees with REST on the default layout');

  // --- permissions
  const anon = await api(node.url, PATH);
  t.equal(anon.status, 401, 'GET without a token: 401');
  const forbiddenGet = await api(node.url, PATH, { token: plain.token });
  t.equal(forbiddenGet.status, 403, 'GET by a non-root user: 403');
  t.match(forbiddenGet.text, /root/);
  const forbiddenPost = await post(node, layoutOf(30), plain.token);
  t.equal(forbiddenPost.status, 403, 'POST by a non-root user: 403');
  t.match(forbiddenPost.text, /root/);
  t.equal((await api(node.url, PATH, { body: JSON.stringify(layoutOf(30)) })).status, 401, 'POST without a token: 401');
  t.same(await getLayout(node), layoutOf(24), 'refused POSTs changed nothing');

  // --- a valid raise to 30 partitions, by a root user (not only the local admin token)
  const raised = await post(node, layoutOf(30), root.token);
  t.equal(raised.status, 200, `POST of a valid 30-partition layout: 200 (${raised.text.slice(0, 200)})`);
  t.same(raised.json(), layoutOf(30), 'the response is the stored layout');
  t.same(await getLayout(node), layoutOf(30), 'GET shows the new layout');
  t.same(await gqlLayout(node, root.token), layoutOf(30), 'GraphQL shows the new layout');
  // Posting the same layout again (same count) is fine.
  t.equal((await post(node, layoutOf(30))).status, 200, 're-posting the current layout: 200');

  // --- every rule: 400, text/plain, the message names the rule, the stored layout is unchanged.
  const with31 = (patch: (l: Entry[]) => unknown): unknown => patch(layoutOf(31));
  const cases: { name: string; body: unknown; message: RegExp }[] = [
    { name: 'a lower count than the current one', body: layoutOf(24), message: /cannot be lowered \(current 30, proposed 24\)/ },
    {
      name: 'a gap (partition 5 missing)',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 5 ? { partition: 31, hosts: [1] } : e))),
      message: /without gaps; missing 5\b/,
    },
    {
      name: 'duplicate partition numbers',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 7 ? { partition: 3, hosts: [1] } : e))),
      message: /duplicate partition number 3\b/,
    },
    {
      name: 'a partition with an empty hosts list',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 30 ? { partition: 30, hosts: [] } : e))),
      message: /partition 30: has no host/,
    },
    {
      name: 'an unknown node id',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 4 ? { partition: 4, hosts: [1, 2] } : e))),
      message: /partition 4: unknown node id 2\b/,
    },
    { name: 'malformed JSON', body: '[{"partition": 0, "hosts": [1]}', message: /malformed JSON/ },
    { name: 'not an array (an object)', body: { partitions: layoutOf(31) }, message: /must be a JSON array/ },
    { name: 'not an array (a number)', body: '42', message: /must be a JSON array/ },
    {
      name: 'a non-integer partition number',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 2 ? { partition: 2.5, hosts: [1] } : e))),
      message: /entry 2: "partition" must be a non-negative integer/,
    },
    {
      name: 'a string partition number',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 2 ? { partition: '2', hosts: [1] } : e))),
      message: /entry 2: "partition" must be a non-negative integer/,
    },
    {
      name: 'a negative partition number',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 0 ? { partition: -1, hosts: [1] } : e))),
      message: /entry 0: "partition" must be a non-negative integer/,
    },
    {
      name: 'hosts not an array',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 6 ? { partition: 6, hosts: 1 } : e))),
      message: /partition 6: "hosts" must be an array of node ids/,
    },
    {
      name: 'a duplicate host in a partition',
      body: with31((l) => (l as Entry[]).map((e) => (e.partition === 8 ? { partition: 8, hosts: [1, 1] } : e))),
      message: /partition 8: lists a host more than once/,
    },
    { name: 'more than 1024 partitions', body: layoutOf(1025), message: /1025 partitions; at most 1024/ },
    {
      name: 'JSON nested deeper than the limit (64)',
      body: `[{"partition": 0, "hosts": ${'['.repeat(70)}1${']'.repeat(70)}}]`,
      message: /nesting deeper than 64/,
    },
  ];
  for (const c of cases) {
    const res = await post(node, c.body);
    t.equal(res.status, 400, `${c.name}: 400 (got ${res.status} ${res.text.slice(0, 300)})`);
    t.match(res.headers.get('content-type'), /^text\/plain/, `${c.name}: text/plain`);
    t.match(res.text, c.message, `${c.name}: the message names the rule`);
  }
  t.same(await getLayout(node), layoutOf(30), 'after every rejected layout the stored layout is unchanged');

  // --- several problems in one layout are all named in one message.
  const many = layoutOf(28) as unknown[];
  many[1] = { partition: 1, hosts: [] }; // no host
  many[2] = { partition: 2, hosts: [9] }; // unknown node
  many[3] = { partition: 3, hosts: [1, 1] }; // duplicate host
  many[4] = { partition: 4, hosts: 'all' }; // hosts not an array
  many[5] = { partition: 6, hosts: [1] }; // duplicate 6, gap at 5
  many[7] = { partition: -3, hosts: [1] }; // negative
  const multi = await post(node, many);
  t.equal(multi.status, 400, 'a layout with many problems: 400');
  for (const re of [
    /partition 1: has no host/,
    /partition 2: unknown node id 9/,
    /partition 3: lists a host more than once/,
    /partition 4: "hosts" must be an array/,
    /duplicate partition number 6/,
    /entry 7: "partition" must be a non-negative integer/,
    /cannot be lowered \(current 30, proposed 28\)/,
    // Partition 4 is present but invalid; it may or may not also be counted as missing.
    /missing (4, )?5, 7\b/,
  ]) {
    t.match(multi.text, re, `the combined message names ${re.source}`);
  }
  t.equal(multi.text.trim().split('\n').length, 1, 'the combined message is one line');
  t.same(await getLayout(node), layoutOf(30), 'unchanged after the multi-problem layout');

  // --- the GraphQL mutation obeys the same rules and agrees with REST.
  const gqlBad = await gql(node.url, node.adminToken, 'mutation { updateIngestPartitionScheme(partitions: [{id: 0, nodeIds: [1]}]) { result } }');
  t.ok(gqlBad.errors !== undefined && gqlBad.errors.length > 0, 'GraphQL layout change that lowers the count is refused');
  t.match(gqlBad.errors?.[0]?.message, /cannot be lowered/);
  const gqlParts = Array.from({ length: 32 }, (_, i) => `{id: ${i}, nodeIds: [1]}`).join(', ');
  const gqlOk = await gql(node.url, node.adminToken, `mutation { updateIngestPartitionScheme(partitions: [${gqlParts}]) { result } }`);
  t.same(gqlOk.errors, undefined, 'GraphQL raise to 32 partitions succeeds');
  t.same(await getLayout(node), layoutOf(32), 'REST sees the GraphQL change');
  t.same(await gqlLayout(node), await getLayout(node), 'GraphQL and REST agree');

  // --- survives a restart
  t.equal(await node.stop(), 0, 'SIGTERM: exit code 0');
  const again = await startNode(t, { dataDir });
  t.same(await getLayout(again), layoutOf(32), 'the layout survives a restart');
  t.same(await gqlLayout(again), layoutOf(32), 'GraphQL agrees after the restart');
  const lower = await post(again, layoutOf(30));
  t.equal(lower.status, 400, 'after the restart the count still cannot be lowered');
  t.match(lower.text, /cannot be lowered \(current 32, proposed 30\)/);
  t.equal(await again.stop(), 0);
});

t.test('[digest] partitions sets the initial count; exactly 1024 partitions is accepted', async (t) => {
  const node = await startNode(t, { config: '[digest]\npartitions = 3\n' });
  t.same(await getLayout(node), layoutOf(3), '[digest] partitions sets the count of a new cluster');
  const big = layoutOf(1024);
  const res = await post(node, big);
  t.equal(res.status, 200, `1024 partitions: 200 (${res.text.slice(0, 200)})`);
  t.equal((await getLayout(node)).length, 1024);
  t.equal((await post(node, layoutOf(1025))).status, 400, '1025 partitions: 400');
  t.equal(await node.stop(), 0);
});
