/**
 * Every ingest endpoint of a real node, with the credentials each takes, and what ends up stored:
 * events are read back from the segment files (`logsvc segments inspect`) after a graceful stop,
 * since there is no query API yet. Each request carries a marker (a `case` field or a unique raw
 * string) so that every stored event can be traced to the request that sent it, and every refused
 * request can be shown to have stored nothing.
 */
import t, { type Test } from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql, type ApiResponse } from '../helpers/http.js';
import { inspectAll, tagKeys, verifyDataDir, type StoredEvent } from '../helpers/segments.js';

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', ''].join('\n');

const node = await startNode(t, { config: CONFIG });

async function mustGql(query: string, variables?: Record<string, unknown>, token = node.adminToken): Promise<any> {
  const r = await gql(node.url, token, query, variables);
  if (r.status !== 200 || r.errors !== undefined) throw new Error(`GraphQL failed: ${r.status} ${JSON.stringify(r.errors)}\n${query}`);
  return r.data;
}

const CREATE_REPO = 'mutation($n: String!) { createRepository(name: $n) { repository { id name ingestTokens { token } } } }';
const repoX = (await mustGql(CREATE_REPO, { n: 'x' })).createRepository.repository;
const repoOther = (await mustGql(CREATE_REPO, { n: 'other' })).createRepository.repository;
const ingestX = repoX.ingestTokens[0].token as string;
const ingestOther = repoOther.ingestTokens[0].token as string;
const member = await createUser(node.url, node.adminToken, 'member');
const outsider = await createUser(node.url, node.adminToken, 'outsider');
await mustGql('mutation($r: String!, $u: String!) { addMember(searchDomainName: $r, username: $u) { clientMutationId } }', { r: 'x', u: 'member' });

// --- sending ---------------------------------------------------------------------------------------

/** Markers of requests that got 200: their events must be stored exactly once. */
const accepted = new Set<string>();
/** Markers of refused requests: nothing of theirs may be stored. */
const refused = new Set<string>();

interface PostOptions {
  token?: string;
  authorization?: string;
  contentType?: string;
}

async function post(path: string, body: unknown, opts: PostOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  return api(node.url, path, { token: opts.token, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Asserts the product's success answer: 200, `{}`, application/json. */
function isOk(t: Test, res: ApiResponse, what: string, markers: string[]): void {
  t.equal(res.status, 200, `${what}: 200 (${res.text.trim()})`);
  t.match(res.headers.get('content-type'), /^application\/json/, `${what}: content-type application/json`);
  t.same(res.status === 200 ? res.json() : null, {}, `${what}: body is {}`);
  for (const m of markers) (res.status === 200 ? accepted : refused).add(m);
}

/** Asserts a refusal: the status, one line of text/plain, the presented secret not echoed. */
function isRefused(t: Test, res: ApiResponse, status: number | number[], what: string, markers: string[], secret?: string): void {
  const allowed = Array.isArray(status) ? status : [status];
  t.ok(allowed.includes(res.status), `${what}: ${allowed.join(' or ')} (got ${res.status}: ${res.text.trim()})`);
  t.match(res.headers.get('content-type'), /^text\/plain/, `${what}: text/plain`);
  t.equal(res.text.trimEnd().split('\n').length, 1, `${what}: one line`);
  if (secret !== undefined) t.notOk(res.text.includes(secret), `${what}: the token is not echoed`);
  for (const m of markers) refused.add(m);
}

const structured = (tags: Record<string, string>, c: string, extra: Record<string, unknown> = {}): unknown[] => [
  { tags, events: [{ timestamp: 1_700_000_000_000, attributes: { case: c }, ...extra }] },
];

const ACCESS_LINE = '192.168.1.20 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif?x=1 HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"';
const SYSLOG_5424 = '<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su 1234 ID47 [exampleSDID@32473 iut="3" eventSource="Application"] \'su root\' failed for lonvick case=u-syslog5424';
const SYSLOG_3164 = '<13>Feb  5 17:32:18 host-b myapp[42]: disk full on /var case=u-syslog3164';
const NONE_LINE = '2024-01-01T00:00:00Z untouched a=1 b=2 none-marker-1';
const RAW_BODY = 'raw callback body case=raw-1 status=ok\nsecond line of the same body';
const RAW_PATH_BODY = '2024-05-05T05:05:05.555Z raw via path case=raw-2';
/** Tokens of the parser tests, created in the first subtest. */
let jsonToken = '';
let plainToken = '';

t.test('service-structured and humio-structured store events under their exact tag sets', async (t) => {
  const body = [
    {
      tags: { host: 'web-1', env: 'prod' },
      events: [
        { timestamp: 1_700_000_000_123, attributes: { case: 's-epoch', user: { name: 'ann', roles: ['admin', 'dev'] }, n: 42, ok: true, nil: null } },
        { timestamp: '2024-03-10T12:34:56.789+05:30', rawstring: 'custom raw line s-iso', attributes: { case: 's-iso' } },
        { timestamp: 1_700_000_000_999, timezone: 'Europe/Copenhagen', attributes: { case: 's-tz' } },
        { timestamp: '2024-03-10T07:04:56Z', attributes: { case: 's-isoz' } },
      ],
    },
    { tags: { '#host': 'web-2' }, events: [{ timestamp: 1_700_000_001_000, attributes: { case: 's-host2', list: [{ a: 1 }, { a: 2, b: [true] }] } }] },
  ];
  isOk(t, await post('/api/v1/ingest/service-structured', body, { token: ingestX }), 'service-structured', ['s-epoch', 's-iso', 's-tz', 's-isoz', 's-host2']);
  isOk(t, await post('/api/v1/ingest/humio-structured', structured({ host: 'web-1', env: 'prod' }, 'hs-1'), { token: ingestX }), 'humio-structured', ['hs-1']);
  // The same tag values in another order name the same datasource.
  isOk(t, await post('/api/v1/ingest/humio-structured', structured({ env: 'prod', host: 'web-1' }, 'hs-2'), { token: ingestX }), 'humio-structured, tags reordered', ['hs-2']);
});

t.test('service-unstructured and humio-unstructured parse with the item type', async (t) => {
  const body = [
    {
      type: 'kv',
      tags: { dc: 'eu' },
      fields: { extra: 'e1', source: 'app.log' },
      messages: ['2024-01-01T00:00:00.000+01:00 level=info user="alice smith" case=u-kv', 'no timestamp here level=warn case=u-kv2'],
    },
    { type: 'json', messages: ['{"@timestamp":"2024-02-02T10:00:00.500-03:00","case":"u-json","user":{"name":"bob"},"tags":["a","b"],"count":3}'] },
    { type: 'json', messages: ['this is not json case=u-jsonfail'] },
    { type: 'accesslog', messages: [ACCESS_LINE] },
    { type: 'syslog', messages: [SYSLOG_5424, SYSLOG_3164] },
    { type: 'none', messages: [NONE_LINE] },
    { messages: ['x=1 case=u-default'] },
  ];
  isOk(t, await post('/api/v1/ingest/service-unstructured', body, { token: ingestX }), 'service-unstructured', [
    'u-kv',
    'u-kv2',
    'u-json',
    'u-syslog5424',
    'u-syslog3164',
    'u-default',
  ]);
  // humioctl's body: type "default", @session in fields.
  const humioctl = [{ type: 'default', fields: { '@session': 'sess-1' }, messages: ['2024-04-04T04:04:04Z humioctl line k=v case=hc-1', 'second case=hc-2'] }];
  isOk(t, await post('/api/v1/ingest/humio-unstructured', humioctl, { token: ingestX }), 'humio-unstructured (humioctl body)', ['hc-1', 'hc-2']);
});

t.test('raw bodies are one event, token in the header or in the path', async (t) => {
  isOk(t, await post('/api/v1/ingest/raw', RAW_BODY, { token: ingestX, contentType: 'text/plain' }), 'raw with header token', ['raw-1']);
  isOk(t, await post(`/api/v1/ingest/raw/${ingestX}`, RAW_PATH_BODY, { contentType: 'text/plain' }), 'raw with path token', ['raw-2']);
});

t.test('repository endpoints take a member API token, in both spellings', async (t) => {
  for (const prefix of ['repositories', 'dataspaces']) {
    const tag = prefix[0];
    isOk(t, await post(`/api/v1/${prefix}/x/ingest`, structured({ host: 'web-1', env: 'prod' }, `${tag}-ingest`), { token: member.token }), `${prefix}/x/ingest`, [`${tag}-ingest`]);
    isOk(t, await post(`/api/v1/${prefix}/x/ingest-messages`, [{ messages: [`via=${prefix} case=${tag}-msg`] }], { token: member.token }), `${prefix}/x/ingest-messages`, [`${tag}-msg`]);
  }
  // The local admin (root) may ingest into any repository.
  isOk(t, await post('/api/v1/repositories/x/ingest-messages', [{ messages: ['case=admin-msg'] }], { token: node.adminToken }), 'repositories/x/ingest-messages as root', ['admin-msg']);
});

t.test("the ingest token's parser wins over the item type", async (t) => {
  const added = await mustGql('mutation { addIngestTokenV3(input: {repositoryName: "x", name: "json-token", parser: "json"}) { name token parser { name } } }');
  t.equal(added.addIngestTokenV3.parser.name, 'json');
  jsonToken = added.addIngestTokenV3.token;
  const plain = await mustGql('mutation { addIngestTokenV3(input: {repositoryName: "x", name: "plain-token"}) { name token parser { name } } }');
  t.equal(plain.addIngestTokenV3.parser, null);
  plainToken = plain.addIngestTokenV3.token;
  const assigned = await mustGql('mutation { assignParserToIngestTokenV2(input: {repositoryName: "x", tokenName: "plain-token", parser: "accesslog"}) { name parser { name } } }');
  t.equal(assigned.assignParserToIngestTokenV2.parser.name, 'accesslog');

  isOk(t, await post('/api/v1/ingest/service-unstructured', [{ type: 'kv', messages: ['{"case":"p-json","level":"debug","k=v":"x=y"}'] }], { token: jsonToken }), 'unstructured, json token, type kv', ['p-json']);
  isOk(
    t,
    await post('/api/v1/ingest/service-unstructured', [{ type: 'syslog', messages: [ACCESS_LINE.replace('frank', 'assigned-user')] }], { token: plainToken }),
    'unstructured, assigned accesslog, type syslog',
    [],
  );
  // Structured: the token's parser also runs on the raw string; attributes win.
  const s = [{ tags: { host: 'web-1' }, events: [{ timestamp: 1_700_000_003_000, rawstring: '{"case":"p-struct","from":"raw","both":"raw"}', attributes: { both: 'attr', extra: 'a' } }] }];
  isOk(t, await post('/api/v1/ingest/service-structured', s, { token: jsonToken }), 'structured, json token', ['p-struct']);
  isOk(t, await post('/api/v1/ingest/raw', '{"case":"p-raw","n":1}', { token: jsonToken, contentType: 'text/plain' }), 'raw, json token', ['p-raw']);
});

const observed: Record<string, number> = {};

t.test('authentication of ingest endpoints', async (t) => {
  const INGEST_TOKEN_PATHS = ['/api/v1/ingest/service-structured', '/api/v1/ingest/humio-structured', '/api/v1/ingest/service-unstructured', '/api/v1/ingest/humio-unstructured', '/api/v1/ingest/raw'];
  const bodyFor = (path: string, marker: string): unknown =>
    path.endsWith('-structured') ? structured({ host: 'auth' }, marker) : path.endsWith('-unstructured') ? [{ messages: [`case=${marker}`] }] : `case=${marker}`;
  let n = 0;
  const mark = (): string => `auth-reject-${n++}`;
  for (const path of INGEST_TOKEN_PATHS) {
    let m = mark();
    isRefused(t, await post(path, bodyFor(path, m)), 401, `${path} without a token`, [m]);
    t.match((await post(path, bodyFor(path, mark()))).headers.get('www-authenticate'), /Bearer/, `${path}: 401 names the scheme`);
    m = mark();
    isRefused(t, await post(path, bodyFor(path, m), { token: 'not-a-real-token-0123456789' }), 401, `${path} with an unknown token`, [m], 'not-a-real-token-0123456789');
    m = mark();
    const apiTok = await post(path, bodyFor(path, m), { token: member.token });
    isRefused(t, apiTok, [401, 403], `${path} with a user API token`, [m], member.token);
    observed[`API token on ${path}`] = apiTok.status;
    m = mark();
    const adminTok = await post(path, bodyFor(path, m), { token: node.adminToken });
    isRefused(t, adminTok, [401, 403], `${path} with the local admin token`, [m], node.adminToken);
    observed[`local admin token on ${path}`] = adminTok.status;
  }
  let m = mark();
  isRefused(t, await post('/api/v1/ingest/raw/not-a-real-token-0123456789', `case=${m}`), 401, 'raw/<unknown token>', [m], 'not-a-real-token-0123456789');
  m = mark();
  const apiInPath = await post(`/api/v1/ingest/raw/${member.token}`, `case=${m}`);
  isRefused(t, apiInPath, [401, 403], 'raw/<API token>', [m], member.token);
  observed['API token in raw/<token>'] = apiInPath.status;

  for (const prefix of ['repositories', 'dataspaces']) {
    for (const kind of ['ingest', 'ingest-messages']) {
      const path = `/api/v1/${prefix}/x/${kind}`;
      const b = (marker: string): unknown => (kind === 'ingest' ? structured({ host: 'auth' }, marker) : [{ messages: [`case=${marker}`] }]);
      m = mark();
      isRefused(t, await post(path, b(m)), 401, `${path} without a token`, [m]);
      m = mark();
      isRefused(t, await post(path, b(m), { token: 'not-a-real-token-0123456789' }), 401, `${path} with an unknown token`, [m], 'not-a-real-token-0123456789');
      m = mark();
      isRefused(t, await post(path, b(m), { token: outsider.token }), 404, `${path} with a non-member's API token`, [m], outsider.token);
      m = mark();
      isRefused(t, await post(`/api/v1/${prefix}/no-such-repo/${kind}`, b(m), { token: member.token }), 404, `${prefix}/no-such-repo/${kind} with a member's token`, [m]);
      m = mark();
      isRefused(t, await post(path, b(m), { token: ingestOther }), 403, `${path} with an ingest token of another repository`, [m], ingestOther);
    }
  }
  // An ingest token of the repository itself is accepted on its repository endpoints.
  const own = await post('/api/v1/repositories/x/ingest', structured({ host: 'auth' }, 'auth-ok-own-ingest-token'), { token: ingestX });
  observed["repo's own ingest token on /repositories/x/ingest"] = own.status;
  isOk(t, own, "repositories/x/ingest with x's ingest token", ['auth-ok-own-ingest-token']);

  // Other ways to present an ingest token.
  isOk(t, await post('/api/v1/ingest/service-unstructured', [{ messages: ['case=auth-ok-splunk'] }], { authorization: `Splunk ${ingestX}` }), 'Authorization: Splunk <token>', ['auth-ok-splunk']);
  const basic = Buffer.from(`anyuser:${ingestX}`).toString('base64');
  isOk(t, await post('/api/v1/ingest/service-unstructured', [{ messages: ['case=auth-ok-basic'] }], { authorization: `Basic ${basic}` }), 'Basic auth, token as password', ['auth-ok-basic']);
  isOk(t, await post('/api/v1/ingest/raw', 'case=auth-ok-lowercase', { authorization: `bearer ${ingestX}`, contentType: 'text/plain' }), 'lower-case bearer', ['auth-ok-lowercase']);
  m = mark();
  isRefused(t, await post('/api/v1/ingest/raw', `case=${m}`, { authorization: `Basic ${Buffer.from(`anyuser:wrong-${ingestX}`).toString('base64')}`, contentType: 'text/plain' }), 401, 'Basic auth with a wrong token', [m]);
  // A removed ingest token stops working.
  const temp = await mustGql('mutation { addIngestTokenV3(input: {repositoryName: "x", name: "temp"}) { token } }');
  isOk(t, await post('/api/v1/ingest/raw', 'case=auth-ok-temp', { token: temp.addIngestTokenV3.token, contentType: 'text/plain' }), 'a fresh token', ['auth-ok-temp']);
  await mustGql('mutation { removeIngestToken(repositoryName: "x", name: "temp") { result } }');
  m = mark();
  isRefused(t, await post('/api/v1/ingest/raw', `case=${m}`, { token: temp.addIngestTokenV3.token, contentType: 'text/plain' }), 401, 'a removed token', [m]);
  t.comment(`observed: ${JSON.stringify(observed)}`);
});

// --- reading back ----------------------------------------------------------------------------------

t.test('what was stored', async (t) => {
  t.equal(await node.stop(), 0, 'the node stops cleanly');
  const segs = await inspectAll(node.dataDir);
  t.ok(segs.length > 0, 'there are segment files');
  for (const s of segs) t.equal(s.code, 0, `inspect ${s.file}`);
  const dsOf = new Map<StoredEvent, string>();
  const events: StoredEvent[] = [];
  for (const s of segs) {
    for (const e of s.events) {
      dsOf.set(e, s.ds);
      events.push(e);
    }
  }
  const v = await verifyDataDir(node.dataDir);
  t.equal(v.code, 0, `segments verify is clean: ${v.summary}`);
  t.same(v.problems, []);

  const byCase = (c: string): StoredEvent[] => events.filter((e) => e.case === c);
  const one = (c: string): StoredEvent => {
    const found = byCase(c);
    t.equal(found.length, 1, `exactly one event with case=${c}`);
    return found[0] ?? {};
  };
  const byRaw = (raw: string): StoredEvent => {
    const found = events.filter((e) => e['@rawstring'] === raw);
    t.equal(found.length, 1, `exactly one event with @rawstring ${JSON.stringify(raw.slice(0, 40))}`);
    return found[0] ?? {};
  };
  const ingestTs = (e: StoredEvent): number => Number(e['@ingesttimestamp']);
  const repoTagOk = (e: StoredEvent): boolean => e['#repo'] === repoX.name || e['#repo'] === repoX.id;

  t.test('accepted requests are all stored once, refused ones not at all', async (t) => {
    for (const m of accepted) t.equal(byCase(m).length, 1, `accepted ${m} stored once`);
    for (const m of refused) t.equal(byCase(m).length, 0, `refused ${m} not stored`);
    const ids = events.map((e) => e['@id']);
    t.equal(new Set(ids).size, ids.length, `all ${ids.length} @id values are distinct`);
    for (const e of events) {
      t.match(e['@id'], /^[0-9a-f]{24}_\d+_0_-?\d+$/, '@id is shaped like the product ids');
      if (!repoTagOk(e)) t.fail(`#repo is neither the repository name nor its id: ${JSON.stringify(e)}`);
      t.equal(typeof e['@timestamp'], 'number');
      t.match(e['@ingesttimestamp'], /^\d+$/);
    }
    t.comment(`#repo in segments inspect output: ${JSON.stringify(events[0]?.['#repo'])} (repository name "x", id ${repoX.id})`);
    // Every repository-x event is in x; nothing leaked into "other".
    t.equal(events.filter((e) => e['#repo'] === repoOther.name || e['#repo'] === repoOther.id).length, 0, 'nothing stored in "other"');
  });

  t.test('structured: tags, timestamps, attributes, rawstring', async (t) => {
    const epoch = one('s-epoch');
    t.same(tagKeys(epoch), ['#env', '#host', '#repo'], 'tags are exactly the item tags plus #repo');
    t.equal(epoch['#host'], 'web-1');
    t.equal(epoch['#env'], 'prod');
    t.equal(epoch['#type'], undefined, 'no #type without a parser');
    t.equal(epoch['@timestamp'], 1_700_000_000_123);
    t.equal(epoch['@timezone'], 'Z');
    t.equal(epoch['user.name'], 'ann', 'nested objects flatten with dots');
    t.equal(epoch['user.roles[0]'], 'admin', 'arrays flatten as [i]');
    t.equal(epoch['user.roles[1]'], 'dev');
    t.equal(epoch.n, '42', 'numbers are stored as strings');
    t.equal(epoch.ok, 'true');
    t.notOk('nil' in epoch, 'null attributes are not stored');
    t.equal(epoch['@rawstring'], JSON.stringify({ case: 's-epoch', user: { name: 'ann', roles: ['admin', 'dev'] }, n: 42, ok: true, nil: null }), '@rawstring defaults to the JSON of the attributes');
    t.notOk('@error' in epoch);

    const iso = one('s-iso');
    t.equal(iso['@timestamp'], Date.parse('2024-03-10T12:34:56.789+05:30'), 'ISO timestamp with an offset');
    t.equal(iso['@timezone'], '+05:30');
    t.equal(iso['@rawstring'], 'custom raw line s-iso', 'a given rawstring is kept');
    const tz = one('s-tz');
    t.equal(tz['@timestamp'], 1_700_000_000_999, 'a numeric timestamp stays UTC');
    t.equal(tz['@timezone'], 'Europe/Copenhagen', 'the timezone field sets @timezone');
    const isoz = one('s-isoz');
    t.equal(isoz['@timestamp'], Date.parse('2024-03-10T07:04:56Z'));
    t.equal(isoz['@timezone'], 'Z');

    const h2 = one('s-host2');
    t.same(tagKeys(h2), ['#host', '#repo'], 'a "#"-prefixed tag name is stored without the extra #');
    t.equal(h2['#host'], 'web-2');
    t.equal(h2['list[0].a'], '1');
    t.equal(h2['list[1].a'], '2');
    t.equal(h2['list[1].b[0]'], 'true');

    const webOne = dsOf.get(epoch);
    for (const c of ['s-iso', 's-tz', 's-isoz', 'hs-1', 'hs-2', 'r-ingest', 'd-ingest']) t.equal(dsOf.get(one(c)), webOne, `${c} is in the {host:web-1, env:prod} datasource`);
    t.not(dsOf.get(h2), webOne, 'another tag set is another datasource');
    t.not(dsOf.get(one('p-struct')), webOne, 'a tag set with a parser #type is another datasource');
    const dsCount = new Set(events.map((e) => dsOf.get(e))).size;
    const tagSets = new Set(events.map((e) => JSON.stringify(tagKeys(e).map((k) => [k, e[k]]))));
    t.equal(dsCount, tagSets.size, 'one datasource per distinct tag set');
  });

  t.test('unstructured: parsers, fields, tags', async (t) => {
    const kv = one('u-kv');
    t.equal(kv['#type'], 'kv');
    t.equal(kv['#dc'], 'eu', 'item tags become tags');
    t.same(tagKeys(kv), ['#dc', '#repo', '#type']);
    t.equal(kv['@timestamp'], Date.parse('2024-01-01T00:00:00.000+01:00'), 'kv finds the leading timestamp');
    t.equal(kv['@timezone'], '+01:00');
    t.equal(kv.level, 'info');
    t.equal(kv.user, 'alice smith', 'quoted kv values');
    t.equal(kv.extra, 'e1', '`fields` are added to every event');
    t.equal(kv.source, 'app.log');
    const kv2 = one('u-kv2');
    t.equal(kv2.extra, 'e1', '`fields` are added to every event');
    t.equal(kv2.level, 'warn');
    t.equal(kv2['@timestamp'], ingestTs(kv2), 'no timestamp in the line: @timestamp = @ingesttimestamp');
    t.equal(dsOf.get(kv), dsOf.get(kv2));

    const json = one('u-json');
    t.equal(json['#type'], 'json');
    t.equal(json['@timestamp'], Date.parse('2024-02-02T10:00:00.500-03:00'));
    t.equal(json['@timezone'], '-03:00');
    t.equal(json['user.name'], 'bob');
    t.equal(json['tags[0]'], 'a');
    t.equal(json['tags[1]'], 'b');
    t.equal(json.count, '3');
    t.notOk('@error' in json, 'no error on a valid line');

    const fail = byRaw('this is not json case=u-jsonfail');
    t.equal(fail['#type'], 'json');
    t.equal(fail['@error'], 'true', 'a parse failure is stored with @error');
    t.equal(fail['@event_parsed'], 'false');
    t.match(fail['@error_msg'], /JSON/i);
    t.equal(fail['@timestamp'], ingestTs(fail));
    t.equal(fail.case, undefined, 'a failed json parse does not fall back to kv');

    const access = byRaw(ACCESS_LINE);
    t.equal(access['#type'], 'accesslog');
    t.match(access, {
      client: '192.168.1.20',
      userid: 'frank',
      method: 'GET',
      url: '/apache_pb.gif?x=1',
      httpversion: '1.0',
      statuscode: '200',
      responsesize: '2326',
      referrer: 'http://www.example.com/start.html',
      useragent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
    });
    t.notOk('ident' in access, 'an ident of "-" is not stored');
    t.equal(access['@timestamp'], Date.UTC(2000, 9, 10, 20, 55, 36));
    t.equal(access['@timezone'], '-07:00');

    const s5424 = byRaw(SYSLOG_5424);
    t.equal(s5424['#type'], 'syslog');
    t.match(s5424, {
      priority: '34',
      facility: '4',
      severity: '2',
      host: 'mymachine.example.com',
      app: 'su',
      pid: '1234',
      msgid: 'ID47',
      'exampleSDID@32473.iut': '3',
      'exampleSDID@32473.eventSource': 'Application',
      message: "'su root' failed for lonvick case=u-syslog5424",
      case: 'u-syslog5424',
    });
    t.equal(s5424['@timestamp'], Date.parse('2003-10-11T22:14:15.003Z'));
    const s3164 = byRaw(SYSLOG_3164);
    t.match(s3164, { priority: '13', facility: '1', severity: '5', host: 'host-b', app: 'myapp', pid: '42', message: 'disk full on /var case=u-syslog3164', case: 'u-syslog3164' });
    // No year in the line: the one that puts it closest to now, at most a day ahead.
    let expected = NaN;
    for (let y = new Date().getUTCFullYear() + 1; ; y--) {
      expected = Date.UTC(y, 1, 5, 17, 32, 18);
      if (expected <= ingestTs(s3164) + 86_400_000) break;
    }
    t.equal(s3164['@timestamp'], expected, 'RFC 3164 time in the inferred year, UTC');
    t.equal(s3164['@timezone'], 'Z');

    const none = byRaw(NONE_LINE);
    t.equal(none['#type'], 'none');
    t.notOk('a' in none || 'b' in none, 'the none parser extracts nothing');
    t.equal(none['@timestamp'], ingestTs(none), 'the none parser sets no timestamp');

    const def = one('u-default');
    t.equal(def['#type'], 'kv', 'no type: kv');
    t.equal(def.x, '1');
    t.same(tagKeys(def), ['#repo', '#type']);

    const hc1 = one('hc-1');
    t.equal(hc1['#type'], 'kv', 'type "default" (humioctl) is kv');
    t.equal(hc1['@session'], 'sess-1');
    t.equal(hc1.k, 'v');
    t.equal(hc1['@timestamp'], Date.parse('2024-04-04T04:04:04Z'));
    t.equal(one('hc-2')['@session'], 'sess-1');
  });

  t.test('raw: one event per body; @timestamp falls back to @ingesttimestamp', async (t) => {
    const raw1 = byRaw(RAW_BODY);
    t.equal(raw1.case, 'raw-1');
    t.equal(raw1.status, 'ok');
    t.equal(raw1['#type'], 'kv', 'a token without a parser: kv');
    t.equal(raw1['@timestamp'], ingestTs(raw1), '@timestamp equals @ingesttimestamp');
    t.equal(raw1['@timezone'], 'Z');
    t.equal(events.filter((e) => String(e['@rawstring']).includes('second line of the same body')).length, 1, 'a multi-line body is not split');
    const raw2 = byRaw(RAW_PATH_BODY);
    t.equal(raw2['@timestamp'], Date.parse('2024-05-05T05:05:05.555Z'), 'a timestamp the parser finds is used');
  });

  t.test('repository endpoints store into that repository', async (t) => {
    for (const c of ['r-ingest', 'd-ingest']) {
      const e = one(c);
      t.ok(repoTagOk(e), `${c} is in x`);
      t.same(tagKeys(e), ['#env', '#host', '#repo']);
    }
    for (const c of ['r-msg', 'd-msg', 'admin-msg']) t.equal(one(c)['#type'], 'kv', `${c}: kv`);
    t.equal(one('r-msg').via, 'repositories');
    t.equal(one('d-msg').via, 'dataspaces');
  });

  t.test('token parsers', async (t) => {
    const pj = one('p-json');
    t.equal(pj['#type'], 'json', "the token's json parser beat type kv");
    t.equal(pj.level, 'debug');
    t.equal(pj['k=v'], 'x=y', 'json members, not kv pairs');
    t.notOk('x' in pj);
    const assigned = byRaw(ACCESS_LINE.replace('frank', 'assigned-user'));
    t.equal(assigned['#type'], 'accesslog', 'the assigned parser beat type syslog');
    t.equal(assigned.userid, 'assigned-user');
    t.equal(assigned.statuscode, '200');
    const ps = one('p-struct');
    t.equal(ps['#type'], 'json', 'structured with a token parser: #type is the parser');
    t.equal(ps['#host'], 'web-1');
    t.equal(ps.from, 'raw', 'the parser ran on the rawstring');
    t.equal(ps.both, 'attr', 'attributes win over parsed fields');
    t.equal(ps.extra, 'a');
    t.equal(ps['@rawstring'], '{"case":"p-struct","from":"raw","both":"raw"}');
    t.equal(ps['@timestamp'], 1_700_000_003_000);
    const pr = one('p-raw');
    t.equal(pr['#type'], 'json');
    t.equal(pr.n, '1');
    t.equal(pr['@timestamp'], ingestTs(pr));
  });

  t.test('observed status codes', async (t) => {
    t.comment(JSON.stringify(observed, null, 1));
    t.pass('recorded');
  });
});
