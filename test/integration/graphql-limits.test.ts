/**
 * The GraphQL endpoint's transport and cost bounds against real nodes: depth and field-count limits
 * (defaults and configured), introspection, malformed requests, body size, error extensions, GET and
 * humioctl's `?id=<OperationName>`.
 */
import t from 'tap';
import { request } from 'node:http';
import { getIntrospectionQuery } from 'graphql';
import { startNode } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';

const node = await startNode(t);
const admin = node.adminToken;

/** `{ f1 { f2 { ... { fN } } } }`: a selection of depth n (the field names need not exist). */
const nested = (n: number): string => {
  let q = 'leaf';
  for (let i = n - 1; i >= 1; i--) q = `f${i} { ${q} }`;
  return `{ ${q} }`;
};

/** n aliases of `viewer { username }`: 2n fields, all valid. */
const aliases = (n: number): string => `{ ${Array.from({ length: n }, (_, i) => `a${i}: viewer { username }`).join(' ')} }`;

const messages = (errors: { message: string }[] | undefined): string[] => (errors ?? []).map((e) => e.message);

t.test('selection depth: default limit 12', async (t) => {
  const deep = await gql(node.url, admin, nested(13));
  t.equal(deep.status, 200, 'HTTP 200');
  t.equal(deep.data, null, 'not executed');
  t.ok(
    messages(deep.errors).some((m) => /selection depth 13 exceeds the limit of 12/.test(m)),
    'an error names the depth and the limit',
  );
  const atLimit = await gql(node.url, admin, nested(12));
  t.notOk(messages(atLimit.errors).some((m) => /selection depth/.test(m)), 'depth 12 is within the limit (other errors only: unknown fields)');

  const named = await gql(node.url, admin, `query TooDeep ${nested(14)}`);
  t.ok(messages(named.errors).some((m) => /^TooDeep: selection depth 14 exceeds the limit of 12/.test(m)), 'the operation name is in the message');

  // Fragments and inline fragments do not hide depth.
  const viaFragments = await gql(node.url, admin, '{ ...A } fragment A on Query { f1 { ...B } } fragment B on X { f2 { f3 { f4 { f5 { f6 { f7 { f8 { f9 { f10 { f11 { f12 { f13 } } } } } } } } } } } }');
  t.ok(messages(viaFragments.errors).some((m) => /selection depth 13 exceeds the limit of 12/.test(m)), 'depth through fragments is counted');

  // Introspection fields are not counted: __type with a deep ofType chain is fine.
  let ofType = 'name';
  for (let i = 0; i < 15; i++) ofType = `ofType { ${ofType} }`;
  const intro = await gql(node.url, admin, `{ __type(name: "Query") { fields { type { ${ofType} } } } }`);
  t.equal(intro.errors, undefined, 'a deep __type query passes');
  t.equal(intro.data.__type.fields.length > 0, true);
});

t.test('field count: default limit 2000', async (t) => {
  const ok = await gql(node.url, admin, aliases(1000));
  t.equal(ok.errors, undefined, '2000 fields are allowed');
  t.equal(Object.keys(ok.data).length, 1000);
  t.equal(ok.data.a999.username, 'local-admin');

  const tooMany = await gql(node.url, admin, aliases(1001));
  t.equal(tooMany.status, 200, 'HTTP 200');
  t.equal(tooMany.data, null, 'not executed');
  t.same(messages(tooMany.errors), ['anonymous operation: selects more than the limit of 2000 fields'], 'the error names the limit');

  // Fragments are counted once per spread.
  const frag = `fragment F on Query { ${Array.from({ length: 300 }, (_, i) => `b${i}: viewer { username }`).join(' ')} }`;
  const spread = await gql(node.url, admin, `{ ...F v1: viewer { ...G } v2: viewer { ...G } ... on Query { ...F } } fragment G on Account { username } ${frag}`);
  t.equal(spread.errors, undefined, '2 x 600 + 4 fields are allowed');
  const fourTimes = await gql(node.url, admin, `{ ...F ... on Query { ...F } ...F ...F } ${frag}`);
  t.ok(messages(fourTimes.errors).some((m) => /selects more than the limit of 2000 fields/.test(m)), 'a fragment spread 4 times counts 4 times');
});

t.test('the standard introspection query succeeds', async (t) => {
  const res = await gql(node.url, admin, getIntrospectionQuery());
  t.equal(res.status, 200);
  t.equal(res.errors, undefined);
  const types = (res.data.__schema.types as { name: string }[]).map((x) => x.name);
  for (const name of ['Query', 'Mutation', 'User', 'Repository', 'SearchDomain', 'DateTime', 'Long']) t.ok(types.includes(name), `the schema has ${name}`);
  t.equal(res.data.__schema.queryType.name, 'Query');
  t.equal(res.data.__schema.mutationType.name, 'Mutation');
  t.equal(res.data.__schema.subscriptionType, null);
  // As GraphiQL sends it: with operationName and the explorer's Accept header.
  const gi = await api(node.url, '/graphql', {
    token: admin,
    headers: { accept: 'application/json, multipart/mixed' },
    body: JSON.stringify({ query: getIntrospectionQuery(), operationName: 'IntrospectionQuery' }),
  });
  t.equal(gi.status, 200);
  t.equal(gi.json().errors, undefined);
});

t.test('malformed requests', async (t) => {
  const badJson = await api(node.url, '/graphql', { token: admin, body: '{"query": "{ viewer { username } }"' });
  t.equal(badJson.status, 400, 'malformed JSON: 400');
  t.match(badJson.text, /JSON/);
  t.equal((await api(node.url, '/graphql', { token: admin, body: '[1, 2]' })).status, 400, 'a JSON array: 400');
  t.equal((await api(node.url, '/graphql', { token: admin, body: '{}' })).status, 400, 'no query: 400');
  t.equal((await api(node.url, '/graphql', { token: admin, body: '{"query": 42}' })).status, 400, 'a non-string query: 400');
  t.equal((await api(node.url, '/graphql', { token: admin, body: '{"query": "{ viewer { username } }", "variables": [1]}' })).status, 400, 'variables not an object: 400');

  const deepJson = `{"query": "{ viewer { username } }", "variables": {"v": ${'['.repeat(100)}${']'.repeat(100)}}}`;
  const tooDeep = await api(node.url, '/graphql', { token: admin, body: deepJson });
  t.equal(tooDeep.status, 400, 'JSON nested deeper than http.max_json_depth: 400');
  t.match(tooDeep.text, /nesting deeper than 64/);

  const wrongType = await api(node.url, '/graphql', { token: admin, headers: { 'content-type': 'text/plain' }, body: '{"query": "{ viewer { username } }"}' });
  t.equal(wrongType.status, 415, 'a non-JSON content type: 415');

  const syntax = await gql(node.url, admin, '{ viewer { username }');
  t.equal(syntax.status, 200, 'a syntax error: HTTP 200');
  t.equal(syntax.errors?.length, 1);
  t.match(syntax.errors?.[0], { message: /^Syntax Error/, locations: [{ line: 1, column: Number }] }, 'with locations');
  const multiLine = await gql(node.url, admin, '{\n  viewer {\n    username\n  }\n  ]\n}');
  t.match(multiLine.errors?.[0], { message: /^Syntax Error/, locations: [{ line: 5, column: 3 }] }, 'the location points at the bad token');

  const unknownField = await gql(node.url, admin, '{ viewer { nope } }');
  t.match(unknownField.errors?.[0], { message: /Cannot query field "nope"/, locations: [{ line: 1, column: 12 }] });
});

t.test('a body over 1 MiB is refused with 413', async (t) => {
  const big = JSON.stringify({ query: `{ viewer { username } } # ${'x'.repeat(1024 * 1024)}` });
  const res = await postRaw(node.url, '/graphql', admin, big);
  t.equal(res.status, 413);
  t.match(res.body, /larger than the limit of 1048576 bytes/);
  // Just under the limit is accepted (a comment does not count as tokens).
  const under = JSON.stringify({ query: `{ viewer { username } } # ${'x'.repeat(1024 * 1024 - 100)}` });
  t.ok(Buffer.byteLength(under) <= 1024 * 1024);
  const ok = await api(node.url, '/graphql', { token: admin, body: under });
  t.equal(ok.status, 200, 'a body just under the limit is accepted');
  t.equal(ok.json().data.viewer.username, 'local-admin');
  t.equal((await api(node.url, '/api/v1/status')).status, 200, 'the node still answers');
});

t.test('domain errors carry extensions.code', async (t) => {
  const first = await gql(node.url, admin, 'mutation { addUser(input: {username: "dup"}) { user { id } } }');
  t.equal(first.errors, undefined);
  const dup = await gql(node.url, admin, 'mutation { addUser(input: {username: "dup"}) { user { id } } }');
  t.equal(dup.status, 200);
  t.match(dup.errors?.[0], { message: 'user "dup" already exists', path: ['addUser'], locations: [{ line: 1, column: 12 }], extensions: { code: 'E_CONFLICT' } });
  const notFound = await gql(node.url, admin, '{ repository(name: "none") { name } }');
  t.match(notFound.errors?.[0]?.extensions, { code: 'E_NOT_FOUND' });
  const invalid = await gql(node.url, admin, 'mutation { createRepository(name: "a b") { repository { name } } }');
  t.match(invalid.errors?.[0]?.extensions, { code: 'E_VALIDATION' });
  // Every root field here is non-null, so a failing one makes data null (GraphQL's null propagation).
  const whole = await gql(node.url, admin, '{ viewer { username } repository(name: "none") { name } }');
  t.equal(whole.status, 200);
  t.equal(whole.data, null);
  t.match(whole.errors, [{ path: ['repository'], extensions: { code: 'E_NOT_FOUND' } }]);
});

t.test('GET /graphql?query=... and POST /graphql?id=OperationName', async (t) => {
  const q = encodeURIComponent('{ viewer { username isRoot } }');
  const get = await api(node.url, `/graphql?query=${q}`, { token: admin });
  t.equal(get.status, 200);
  t.match(get.headers.get('content-type'), /^application\/json/);
  t.same(get.json(), { data: { viewer: { username: 'local-admin', isRoot: true } } });

  const vars = encodeURIComponent(JSON.stringify({ n: 'nope' }));
  const getVars = await api(node.url, `/graphql?query=${encodeURIComponent('query($n: String!) { repository(name: $n) { name } }')}&variables=${vars}`, { token: admin });
  t.equal(getVars.status, 200);
  t.match(getVars.json().errors?.[0]?.message, /"nope" does not exist/, 'variables in the query string are used');

  const getMutation = await api(node.url, `/graphql?query=${encodeURIComponent('mutation { addUser(input: {username: "via-get"}) { user { id } } }')}`, { token: admin });
  t.equal(getMutation.status, 405, 'no mutations over GET');
  t.equal((await gql(node.url, admin, '{ users(search: "via-get") { username } }')).data.users.length, 0, 'and nothing was added');

  t.equal((await api(node.url, `/graphql?query=${q}`)).status, 401, 'GET needs authentication too');

  const humioctl = await api(node.url, '/graphql?id=GetUsername', {
    token: admin,
    body: JSON.stringify({ query: 'query GetUsername { viewer { username } }', operationName: 'GetUsername', variables: {} }),
  });
  t.equal(humioctl.status, 200);
  t.same(humioctl.json(), { data: { viewer: { username: 'local-admin' } } });

  const twoOps = await api(node.url, '/graphql?id=B', {
    token: admin,
    body: JSON.stringify({ query: 'query A { viewer { username } } query B { viewer { isRoot } }', operationName: 'B' }),
  });
  t.same(twoOps.json(), { data: { viewer: { isRoot: true } } }, 'operationName picks the operation');
});

t.test('limits are configurable: [graphql] max_depth = 3, max_complexity = 300', async (t) => {
  const small = await startNode(t, { config: '[graphql]\nmax_depth = 3\nmax_complexity = 300\n' });
  const depth3 = await gql(small.url, small.adminToken, '{ cluster { nodes { id } } }');
  t.equal(depth3.errors, undefined, 'depth 3 passes');
  t.same(depth3.data, { cluster: { nodes: [{ id: 1 }] } });

  const depth4 = await gql(small.url, small.adminToken, '{ repository(name: "x") { ingestTokens { parser { name } } } }');
  t.equal(depth4.status, 200);
  t.equal(depth4.data, null);
  t.same(messages(depth4.errors), ['anonymous operation: selection depth 4 exceeds the limit of 3'], 'a valid depth-4 query fails, naming the limit');

  const triples = (n: number): string => `{ ${Array.from({ length: n }, (_, i) => `a${i}: viewer { username isRoot }`).join(' ')} }`;
  t.equal((await gql(small.url, small.adminToken, triples(100))).errors, undefined, '300 fields pass');
  const over = await gql(small.url, small.adminToken, triples(101));
  t.same(messages(over.errors), ['anonymous operation: selects more than the limit of 300 fields'], '303 fields fail, naming the limit');

  // The standard introspection query (depth 15 and 220 fields, fragments expanded) is not affected.
  t.equal((await gql(small.url, small.adminToken, getIntrospectionQuery())).errors, undefined, 'introspection still works');
});

t.test('introspection cannot be used to multiply work past the field limit', async (t) => {
  // Each aliased __schema selection returns the whole schema; the field limit must bound how many.
  const frag = 'fragment S on __Schema { types { name kind description fields(includeDeprecated: true) { name description args { name description type { name kind ofType { name kind } } } type { name kind ofType { name kind ofType { name kind } } } } } }';
  const query = `{ ${Array.from({ length: 300 }, (_, i) => `s${i}: __schema { ...S }`).join(' ')} } ${frag}`;
  const started = Date.now();
  const res = await api(node.url, '/graphql', { token: admin, body: JSON.stringify({ query }), timeoutMs: 60_000 });
  const ms = Date.now() - started;
  t.equal(res.status, 200);
  t.comment(`300 aliased __schema selections (a ${query.length}-byte query): ${res.text.length}-byte answer in ${ms} ms`);
  const body = res.json();
  t.ok(body.errors !== undefined && body.data === undefined, 'refused before execution');
  t.ok(messages(body.errors).some((m) => /more than the limit of 2000/.test(m)), 'the error names the field limit');
  t.ok(res.text.length < 1024 * 1024, `the answer is small (got ${res.text.length} bytes)`);
});

// Keep this subtest last: if the rule is exponential, the node stays busy until teardown kills it.
t.test('nested fragment spreads are measured in bounded time', async (t) => {
  // F_i spreads F_(i-1) twice: 2^28 expanded fields from a query of under 2 KB.
  const n = 28;
  const frags = ['fragment F0 on Account { username }'];
  for (let i = 1; i <= n; i++) frags.push(`fragment F${i} on Account { ...F${i - 1} ...F${i - 1} }`);
  const query = `{ viewer { ...F${n} } } ${frags.join(' ')}`;
  t.ok(query.length < 2048);
  const started = Date.now();
  let answer: Awaited<ReturnType<typeof gql>> | Error;
  try {
    const res = await api(node.url, '/graphql', { token: admin, body: JSON.stringify({ query }), timeoutMs: 5_000 });
    answer = { status: res.status, data: res.json().data ?? null, errors: res.json().errors };
  } catch (err) {
    answer = err as Error;
  }
  const ms = Date.now() - started;
  t.notOk(answer instanceof Error, `answered within 5 s (took ${ms} ms${answer instanceof Error ? `: ${answer.message}` : ''})`);
  if (!(answer instanceof Error)) {
    t.equal(answer.status, 200);
    t.ok(messages(answer.errors).some((m) => /more than the limit of 2000/.test(m)), 'refused by the field limit');
  }
});

/** POST with node:http, reading the answer even if the server closes before the upload ends. */
function postRaw(base: string, path: string, token: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: 15_000,
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    // EPIPE/ECONNRESET while still writing are expected when the server refuses early.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    req.end(body);
  });
}
