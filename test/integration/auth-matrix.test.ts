/**
 * Who may call what: every management endpoint against every kind of principal, on one real node.
 * Public endpoints answer 200 to anyone; missing or invalid credentials are 401 (one text line and a
 * WWW-Authenticate header); valid credentials without the right are 403 (one text line), except
 * inside GraphQL, where a permission failure is an entry in errors[] of an HTTP 200 answer.
 */
import t from 'tap';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql, type ApiResponse } from '../helpers/http.js';

// A long grace period keeps the overall health at most WARN, so health endpoints answer 200 on any disk.
const CONFIG = '[health]\ngrace_period_seconds = 600\n';

const node = await startNode(t, { config: CONFIG });

// --- principals ------------------------------------------------------------------------------------

const plain = await createUser(node.url, node.adminToken, 'plain-user');
const root = await createUser(node.url, node.adminToken, 'root-user', true);
const repo = await gql(node.url, node.adminToken, 'mutation { createRepository(name: "auth-repo") { repository { name } } }');
if (repo.errors !== undefined) throw new Error(`createRepository failed: ${JSON.stringify(repo.errors)}`);
const tokens = await gql(node.url, node.adminToken, '{ repository(name: "auth-repo") { ingestTokens { token } } }');
const ingestToken = tokens.data.repository.ingestTokens[0].token as string;
const WRONG_TOKEN = 'wrong-token-0123456789abcdefghijklmnopqrstuvwxyz';

type Kind = 'anonymous' | 'invalid' | 'user' | 'root' | 'ingest';

interface PrincipalCase {
  name: string;
  kind: Kind;
  /** The Authorization header, if any. */
  authorization?: string;
  /** Secret material that must never be echoed back. */
  secret?: string;
}

const PRINCIPALS: PrincipalCase[] = [
  { name: 'no Authorization header', kind: 'anonymous' },
  { name: 'malformed header "Bearer" without a token', kind: 'invalid', authorization: 'Bearer' },
  { name: 'malformed header "Token abc"', kind: 'invalid', authorization: 'Token abc', secret: 'abc' },
  { name: 'a wrong token', kind: 'invalid', authorization: `Bearer ${WRONG_TOKEN}`, secret: WRONG_TOKEN },
  { name: "a normal user's API token", kind: 'user', authorization: `Bearer ${plain.token}`, secret: plain.token },
  { name: "a root user's API token", kind: 'root', authorization: `Bearer ${root.token}`, secret: root.token },
  { name: 'the local admin token', kind: 'root', authorization: `Bearer ${node.adminToken}`, secret: node.adminToken },
  { name: 'an ingest token', kind: 'ingest', authorization: `Bearer ${ingestToken}`, secret: ingestToken },
];

const ALL_SECRETS = [plain.token, root.token, node.adminToken, ingestToken, WRONG_TOKEN];

// --- endpoints -------------------------------------------------------------------------------------

const LAYOUT = JSON.stringify(Array.from({ length: 24 }, (_, partition) => ({ partition, hosts: [1] })));
let userCounter = 0;

interface EndpointCase {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: () => string;
  /** Who gets a 2xx: everyone, any API user, or root only. */
  access: 'public' | 'user' | 'root';
  /** For GraphQL: a root-only operation answers 200 with errors[] to a non-root user. */
  graphql?: boolean;
}

const ENDPOINTS: EndpointCase[] = [
  { name: 'GET /api/v1/status', method: 'GET', path: '/api/v1/status', access: 'public' },
  { name: 'GET /api/v1/health', method: 'GET', path: '/api/v1/health', access: 'root' },
  { name: 'GET /api/v1/health-json', method: 'GET', path: '/api/v1/health-json', access: 'user' },
  { name: 'GET /api/v1/clusterconfig/ingestpartitions', method: 'GET', path: '/api/v1/clusterconfig/ingestpartitions', access: 'root' },
  { name: 'POST /api/v1/clusterconfig/ingestpartitions', method: 'POST', path: '/api/v1/clusterconfig/ingestpartitions', body: () => LAYOUT, access: 'root' },
  { name: 'POST /graphql { viewer { username } }', method: 'POST', path: '/graphql', body: () => JSON.stringify({ query: '{ viewer { username } }' }), access: 'user', graphql: true },
  {
    name: 'POST /graphql addUser',
    method: 'POST',
    path: '/graphql',
    body: () => JSON.stringify({ query: `mutation { addUser(input: {username: "made-${++userCounter}"}) { user { id username } } }` }),
    access: 'root',
    graphql: true,
  },
  { name: 'GET /api/v1/users', method: 'GET', path: '/api/v1/users', access: 'root' },
];

function send(e: EndpointCase, p: PrincipalCase): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (p.authorization !== undefined) headers.authorization = p.authorization;
  return api(node.url, e.path, e.body === undefined ? { method: e.method, headers } : { method: e.method, headers, body: e.body() });
}

/** Asserts a one-line text/plain error body that echoes no secret. */
type Asserts = Pick<typeof t, 'match' | 'equal' | 'ok' | 'notOk'>;

function oneLineText(t: Asserts, res: ApiResponse, what: string): void {
  t.match(res.headers.get('content-type') ?? '', /^text\/plain/, `${what}: text/plain`);
  const lines = res.text.replace(/\n$/, '').split('\n');
  t.equal(lines.length, 1, `${what}: exactly one line`);
  t.ok(lines[0]!.trim().length > 0, `${what}: not empty`);
  for (const s of ALL_SECRETS) t.notOk(res.text.includes(s), `${what}: no token in the body`);
}

const bodies: string[] = [];

t.test('every endpoint against every principal', async (t) => {
  for (const e of ENDPOINTS) {
    for (const p of PRINCIPALS) {
      const what = `${e.name} with ${p.name}`;
      const res = await send(e, p);
      bodies.push(res.text);
      if (e.access === 'public') {
        t.equal(res.status, 200, `${what}: 200 (public)`);
        continue;
      }
      if (p.kind === 'anonymous' || p.kind === 'invalid') {
        t.equal(res.status, 401, `${what}: 401`);
        t.equal(res.headers.get('www-authenticate'), 'Bearer', `${what}: WWW-Authenticate`);
        oneLineText(t, res, what);
        continue;
      }
      if (p.kind === 'ingest') {
        // An ingest token is a valid credential, but only for sending data.
        t.equal(res.status, 403, `${what}: 403`);
        t.equal(res.headers.get('www-authenticate'), null, `${what}: no WWW-Authenticate on 403`);
        oneLineText(t, res, what);
        t.match(res.text, /ingest token/, `${what}: the message names the ingest token as the problem`);
        continue;
      }
      const permitted = e.access === 'user' || p.kind === 'root';
      if (e.graphql === true) {
        t.equal(res.status, 200, `${what}: GraphQL answers 200`);
        const body = res.json();
        if (permitted) {
          t.equal(body.errors, undefined, `${what}: no errors`);
          t.ok(body.data !== null && typeof body.data === 'object', `${what}: data`);
        } else {
          t.equal(body.errors?.length, 1, `${what}: one error`);
          t.match(body.errors?.[0]?.message, /requires a root user/, `${what}: the error names the problem`);
          t.equal(body.errors?.[0]?.extensions?.code, 'E_FORBIDDEN', `${what}: E_FORBIDDEN`);
          t.equal(body.data, null, `${what}: no data`);
        }
        continue;
      }
      if (permitted) {
        t.equal(res.status, 200, `${what}: 200`);
      } else {
        t.equal(res.status, 403, `${what}: 403`);
        oneLineText(t, res, what);
        t.match(res.text, /root/, `${what}: the message says root is needed`);
      }
    }
  }
});

t.test('what the permitted answers contain', async (t) => {
  const viewerOf = async (token: string) => (await gql(node.url, token, '{ viewer { username isRoot } }')).data?.viewer;
  t.same(await viewerOf(plain.token), { username: 'plain-user', isRoot: false });
  t.same(await viewerOf(root.token), { username: 'root-user', isRoot: true });
  t.same(await viewerOf(node.adminToken), { username: 'local-admin', isRoot: true });

  const users = await api(node.url, '/api/v1/users', { token: root.token });
  t.match(users.headers.get('content-type'), /^application\/json/);
  const names = (users.json() as { username: string }[]).map((u) => u.username);
  t.ok(names.includes('plain-user') && names.includes('root-user') && names.includes('admin'), 'GET /api/v1/users lists the users');

  const layout = await api(node.url, '/api/v1/clusterconfig/ingestpartitions', { token: node.adminToken });
  t.same(layout.json(), JSON.parse(LAYOUT));

  const hj = await api(node.url, '/api/v1/health-json', { token: plain.token });
  t.match(hj.json(), { status: /^(OK|WARN)$/, oks: Array });
});

t.test('the Bearer scheme is case-insensitive', async (t) => {
  for (const scheme of ['bearer', 'BEARER', 'BeArEr', 'Bearer']) {
    const res = await api(node.url, '/api/v1/health', { headers: { authorization: `${scheme} ${node.adminToken}` } });
    t.equal(res.status, 200, `${scheme}: /api/v1/health`);
    const g = await api(node.url, '/graphql', { headers: { authorization: `${scheme} ${plain.token}` }, body: JSON.stringify({ query: '{ viewer { username } }' }) });
    t.equal(g.status, 200, `${scheme}: /graphql`);
    t.equal(g.json().data?.viewer?.username, 'plain-user', `${scheme}: /graphql viewer`);
  }
});

t.test('HTTP basic <user>:<token> on health-json', async (t) => {
  const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString('base64')}` });
  const ok = await api(node.url, '/api/v1/health-json', { headers: basic(`plain-user:${plain.token}`) });
  t.equal(ok.status, 200, 'a normal user with its own name');
  t.match(ok.json(), { status: /^(OK|WARN)$/ });
  t.equal((await api(node.url, '/api/v1/health', { headers: basic(`root-user:${root.token}`) })).status, 200, 'a root user on the text endpoint');
  t.equal((await api(node.url, '/api/v1/health', { headers: basic(`plain-user:${plain.token}`) })).status, 403, 'a normal user on the text endpoint');

  const wrongName = await api(node.url, '/api/v1/health-json', { headers: basic(`root-user:${plain.token}`) });
  t.equal(wrongName.status, 401, 'a token with another user name');
  oneLineText(t, wrongName, 'basic with the wrong name');
  const noColon = await api(node.url, '/api/v1/health-json', { headers: basic(plain.token) });
  t.equal(noColon.status, 401, 'basic without a colon');
  oneLineText(t, noColon, 'basic without a colon');
  const wrongToken = await api(node.url, '/api/v1/health-json', { headers: basic(`plain-user:${WRONG_TOKEN}`) });
  t.equal(wrongToken.status, 401, 'basic with a wrong token');
  oneLineText(t, wrongToken, 'basic with a wrong token');
  bodies.push(wrongName.text, noColon.text, wrongToken.text);
});

t.test('other malformed credentials are 401 too', async (t) => {
  for (const authorization of ['Bearer a b', 'Bearer\ttoo many parts here', `Bearer ${'x'.repeat(600)}`, 'Basic', '   ']) {
    const res = await api(node.url, '/graphql', { headers: { authorization }, body: JSON.stringify({ query: '{ viewer { username } }' }) });
    if (authorization.trim() === '') {
      t.equal(res.status, 401, 'a blank header counts as missing');
    } else {
      t.equal(res.status, 401, `${JSON.stringify(authorization.slice(0, 30))}: 401`);
    }
    t.equal(res.headers.get('www-authenticate'), 'Bearer');
    oneLineText(t, res, JSON.stringify(authorization.slice(0, 30)));
    t.notOk(res.text.includes('x'.repeat(40)), 'a long token is not echoed');
  }
});

t.test('no token appears in any response body or in the node log', async (t) => {
  t.ok(bodies.length > 0);
  for (const s of ALL_SECRETS) {
    t.notOk(
      bodies.some((b) => b.includes(s)),
      'no error body echoes a token',
    );
    t.notOk(node.stderr().includes(s), 'stderr does not contain a token');
  }
});

t.test('a restart issues a new local admin token and refuses the old one', async (t) => {
  const file = join(node.dataDir, 'local-admin-token.txt');
  t.equal((await stat(file)).mode & 0o777, 0o600, 'local-admin-token.txt is 0600 before the restart');
  const oldToken = node.adminToken;
  t.equal(await node.stop(), 0, 'the node stops cleanly');
  for (const s of ALL_SECRETS) t.notOk(node.stderr().includes(s), 'stderr of the stopped node contains no token');

  const again = await startNode(t, { dataDir: node.dataDir, config: CONFIG });
  t.not(again.adminToken, oldToken, 'a new token was written');
  t.equal((await stat(file)).mode & 0o777, 0o600, 'local-admin-token.txt is 0600 after the restart');

  const old = await api(again.url, '/api/v1/health', { token: oldToken });
  t.equal(old.status, 401, 'the old local admin token is refused');
  t.equal(old.headers.get('www-authenticate'), 'Bearer');
  t.notOk(old.text.includes(oldToken));
  t.equal((await api(again.url, '/graphql', { token: oldToken, body: JSON.stringify({ query: '{ viewer { username } }' }) })).status, 401, 'also on GraphQL');

  t.equal((await api(again.url, '/api/v1/health', { token: again.adminToken })).status, 200, 'the new token works');
  t.equal((await gql(again.url, again.adminToken, '{ viewer { username } }')).data?.viewer?.username, 'local-admin');

  // Users, their tokens and ingest tokens are durable.
  t.equal((await api(again.url, '/api/v1/health', { token: root.token })).status, 200, 'the root user token still works');
  t.equal((await api(again.url, '/api/v1/health', { token: plain.token })).status, 403, 'the plain user is still not root');
  t.equal((await api(again.url, '/api/v1/health', { token: ingestToken })).status, 403, 'the ingest token is still an ingest token');
  for (const s of [...ALL_SECRETS, again.adminToken]) t.notOk(again.stderr().includes(s), 'stderr of the restarted node contains no token');
});

t.test('GraphQL clients that accept JSON get refusals as a GraphQL error body', async (t) => {
  const node = await startNode(t);
  const body = JSON.stringify({ query: '{ viewer { username } }' });
  const missing = await api(node.url, '/graphql', { headers: { accept: 'application/json, multipart/mixed' }, body });
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('www-authenticate'), 'Bearer');
  t.match(missing.headers.get('content-type'), /^application\/json/);
  t.match(missing.json(), { errors: [{ message: /authentication required/, extensions: { code: 'E_AUTH_MISSING' } }] });
  const bad = await api(node.url, '/graphql', { headers: { accept: 'application/json', authorization: 'Bearer <your API token>' }, body });
  t.equal(bad.status, 401);
  t.match(bad.json(), { errors: [{ message: /malformed/, extensions: { code: 'E_AUTH_INVALID' } }] });
  const plainText = await api(node.url, '/graphql', { body });
  t.match(plainText.headers.get('content-type'), /^text\/plain/, 'without an Accept for JSON: text, as everywhere else');
});
