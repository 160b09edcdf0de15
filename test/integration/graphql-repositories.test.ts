/**
 * Repositories, members, ingest tokens and the cluster over GraphQL, against one real node. Subtests
 * run in order and share the node's state.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql, type GqlResult } from '../helpers/http.js';

const node = await startNode(t);
const admin = node.adminToken;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

type Asserts = Pick<typeof t, 'equal' | 'match'>;

/** Asserts HTTP 200 with exactly one error whose message matches and whose code is `code`; returns the message. */
async function expectError(t: Asserts, res: Promise<GqlResult>, message: RegExp, code: string, what: string): Promise<string> {
  const r = await res;
  t.equal(r.status, 200, `${what}: HTTP 200`);
  t.equal(r.errors?.length, 1, `${what}: one error`);
  t.match(r.errors?.[0]?.message, message, `${what}: message`);
  t.equal(r.errors?.[0]?.extensions?.code, code, `${what}: ${code}`);
  return r.errors?.[0]?.message ?? '';
}

const CREATE = 'mutation($n: String!, $d: String) { createRepository(name: $n, description: $d) { repository { id name description type automaticSearch createdAt ingestTokens { name token parser { name } } } } }';
const TOKENS = 'query($n: String!) { repository(name: $n) { ingestTokens { name token parser { name isBuiltIn } } } }';
const ADD_MEMBER = 'mutation($r: String!, $u: String!, $a: Boolean, $d: Boolean) { addMember(searchDomainName: $r, username: $u, hasMembershipAdminRights: $a, hasDeletionRights: $d) { clientMutationId } }';
const REMOVE_MEMBER = 'mutation($r: String!, $u: String!) { removeMember(searchDomainName: $r, username: $u) { clientMutationId } }';
const ADD_TOKEN = 'mutation($r: String!, $n: String!, $p: String) { addIngestTokenV3(input: {repositoryName: $r, name: $n, parser: $p}) { name token parser { name } } }';
const REMOVE_TOKEN = 'mutation($r: String!, $n: String!) { removeIngestToken(repositoryName: $r, name: $n) { result } }';
const ASSIGN = 'mutation($r: String!, $n: String!, $p: String!) { assignParserToIngestTokenV2(input: {repositoryName: $r, tokenName: $n, parser: $p}) { name token parser { name } } }';
const UNASSIGN = 'mutation($r: String!, $n: String!) { unassignIngestToken(repositoryName: $r, tokenName: $n) { result } }';
const VISIBLE = '{ repositories { name } searchDomains { name } }';

const tokensOf = async (token: string, repo: string) => (await gql(node.url, token, TOKENS, { n: repo })).data?.repository?.ingestTokens as { name: string; token: string; parser: { name: string } | null }[] | undefined;

t.test('createRepository', async (t) => {
  const before = Date.now();
  const res = await gql(node.url, admin, CREATE, { n: 'web-logs', d: 'Access logs of the web tier' });
  t.equal(res.status, 200);
  t.equal(res.errors, undefined);
  const r = res.data.createRepository.repository;
  t.match(r, { id: /\S/, name: 'web-logs', description: 'Access logs of the web tier', type: 'DEFAULT', automaticSearch: true, createdAt: RFC3339 });
  t.ok(Math.abs(Date.parse(r.createdAt) - before) < 60_000, 'createdAt is close to now');
  t.equal(r.ingestTokens.length, 1, 'one default ingest token');
  t.match(r.ingestTokens[0], { name: 'default', token: UUID, parser: null }, 'the default token is a UUID without a parser');

  const noDescription = await gql(node.url, admin, 'mutation { createRepository(name: "plain.repo_1-x") { repository { name description } } }');
  t.equal(noDescription.errors, undefined);
  t.same(noDescription.data.createRepository.repository, { name: 'plain.repo_1-x', description: '' });

  const max = 'r'.repeat(100);
  const longest = await gql(node.url, admin, CREATE, { n: max });
  t.equal(longest.errors, undefined, 'a 100-character name is allowed');
  t.equal((await gql(node.url, admin, 'mutation($n: String!) { deleteSearchDomain(name: $n) { result } }', { n: max })).data.deleteSearchDomain.result, true);
});

t.test('invalid and duplicate repository names', async (t) => {
  for (const name of ['', '../x', 'has space', 'r'.repeat(101), '-leading-dash', '.hidden', 'a/b', 'tab\tname', 'ünicode']) {
    await expectError(t, gql(node.url, admin, CREATE, { n: name }), /name: must be/, 'E_VALIDATION', `name ${JSON.stringify(name.slice(0, 20))}`);
  }
  await expectError(t, gql(node.url, admin, CREATE, { n: 'web-logs' }), /already exists/, 'E_CONFLICT', 'duplicate name');
  await expectError(t, gql(node.url, admin, CREATE, { n: 'ok-name', d: 'd'.repeat(4097) }), /description/, 'E_VALIDATION', 'description too long');
  const all = await gql(node.url, admin, '{ repositories { name } }');
  t.same(all.data.repositories, [{ name: 'plain.repo_1-x' }, { name: 'web-logs' }], 'nothing was created by the failed calls');
});

t.test('repository, repositories, searchDomain, searchDomains', async (t) => {
  const one = await gql(node.url, admin, '{ repository(name: "web-logs") { name description } }');
  t.same(one.data, { repository: { name: 'web-logs', description: 'Access logs of the web tier' } });
  const list = await gql(node.url, admin, '{ repositories { name } }');
  t.same(list.data.repositories, [{ name: 'plain.repo_1-x' }, { name: 'web-logs' }]);
  const sd = await gql(node.url, admin, '{ searchDomain(name: "web-logs") { __typename name ... on Repository { type } } }');
  t.same(sd.data.searchDomain, { __typename: 'Repository', name: 'web-logs', type: 'DEFAULT' });
  const sds = await gql(node.url, admin, '{ searchDomains { __typename name automaticSearch } }');
  t.same(sds.data.searchDomains, [
    { __typename: 'Repository', name: 'plain.repo_1-x', automaticSearch: true },
    { __typename: 'Repository', name: 'web-logs', automaticSearch: true },
  ]);
  await expectError(t, gql(node.url, admin, '{ repository(name: "nope") { name } }'), /does not exist or you have no access/, 'E_NOT_FOUND', 'unknown repository');
  await expectError(t, gql(node.url, admin, '{ searchDomain(name: "nope") { name } }'), /does not exist or you have no access/, 'E_NOT_FOUND', 'unknown search domain');
});

t.test('members: a normal user sees a repository only once granted', async (t) => {
  const kim = await createUser(node.url, admin, 'kim');
  const none = await gql(node.url, kim.token, VISIBLE);
  t.equal(none.errors, undefined);
  t.same(none.data, { repositories: [], searchDomains: [] }, 'no repositories before being a member');

  const unknownMsg = await expectError(t, gql(node.url, kim.token, '{ repository(name: "no-such-repo") { name } }'), /does not exist or you have no access/, 'E_NOT_FOUND', 'unknown repository');
  const hiddenMsg = await expectError(t, gql(node.url, kim.token, '{ repository(name: "web-logs") { name } }'), /does not exist or you have no access/, 'E_NOT_FOUND', 'not-visible repository');
  t.equal(hiddenMsg.replace('web-logs', 'X'), unknownMsg.replace('no-such-repo', 'X'), 'the same message either way');
  await expectError(t, gql(node.url, kim.token, '{ searchDomain(name: "web-logs") { name } }'), /does not exist or you have no access/, 'E_NOT_FOUND', 'not-visible search domain');

  const add = await gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'kim', a: false, d: false });
  t.equal(add.errors, undefined);
  t.same(add.data, { addMember: { clientMutationId: null } });
  const some = await gql(node.url, kim.token, VISIBLE);
  t.same(some.data, { repositories: [{ name: 'web-logs' }], searchDomains: [{ name: 'web-logs' }] }, 'the member sees it');
  const repo = await gql(node.url, kim.token, '{ repository(name: "web-logs") { name members { user { username } hasMembershipAdminRights hasDeletionRights } } }');
  t.same(repo.data.repository, { name: 'web-logs', members: [{ user: { username: 'kim' }, hasMembershipAdminRights: false, hasDeletionRights: false }] });
  const tokens = await tokensOf(kim.token, 'web-logs');
  t.equal(tokens?.length, 1, 'a member sees the ingest tokens');

  // Rights can be changed by adding again.
  await gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'kim', a: false, d: true });
  const changed = await gql(node.url, admin, '{ repository(name: "web-logs") { members { user { username } hasDeletionRights } } }');
  t.same(changed.data.repository.members, [{ user: { username: 'kim' }, hasDeletionRights: true }]);

  await expectError(t, gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'nobody' }), /does not exist/, 'E_NOT_FOUND', 'adding an unknown user');
  await expectError(t, gql(node.url, admin, ADD_MEMBER, { r: 'no-such-repo', u: 'kim' }), /does not exist/, 'E_NOT_FOUND', 'adding to an unknown repository');
  await expectError(t, gql(node.url, kim.token, ADD_MEMBER, { r: 'web-logs', u: 'kim', a: true }), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member granting itself admin rights');

  const rm = await gql(node.url, admin, REMOVE_MEMBER, { r: 'web-logs', u: 'kim' });
  t.equal(rm.errors, undefined);
  t.same(rm.data, { removeMember: { clientMutationId: null } });
  t.same((await gql(node.url, kim.token, VISIBLE)).data, { repositories: [], searchDomains: [] }, 'no longer visible after removeMember');
  await expectError(t, gql(node.url, admin, REMOVE_MEMBER, { r: 'web-logs', u: 'kim' }), /is not a member/, 'E_NOT_FOUND', 'removing a non-member');
});

t.test('ingest tokens', async (t) => {
  const add = await gql(node.url, admin, ADD_TOKEN, { r: 'web-logs', n: 'kv-token', p: 'kv' });
  t.equal(add.errors, undefined);
  t.match(add.data.addIngestTokenV3, { name: 'kv-token', token: UUID, parser: { name: 'kv' } });
  const kvToken = add.data.addIngestTokenV3.token as string;

  const noParser = await gql(node.url, admin, ADD_TOKEN, { r: 'web-logs', n: 'raw token' });
  t.equal(noParser.errors, undefined);
  t.match(noParser.data.addIngestTokenV3, { name: 'raw token', token: UUID, parser: null });

  await expectError(t, gql(node.url, admin, ADD_TOKEN, { r: 'web-logs', n: 'bad', p: 'no-such-parser' }), /parser: "no-such-parser" does not exist/, 'E_VALIDATION', 'unknown parser');
  await expectError(t, gql(node.url, admin, ADD_TOKEN, { r: 'web-logs', n: 'kv-token' }), /already exists/, 'E_CONFLICT', 'duplicate token name');
  await expectError(t, gql(node.url, admin, ADD_TOKEN, { r: 'web-logs', n: '' }), /name/, 'E_VALIDATION', 'empty token name');
  await expectError(t, gql(node.url, admin, ADD_TOKEN, { r: 'no-such-repo', n: 'x' }), /does not exist/, 'E_NOT_FOUND', 'unknown repository');

  const listed = await tokensOf(admin, 'web-logs');
  t.same(
    listed?.map((x) => [x.name, x.parser?.name ?? null]).sort(),
    [['default', null], ['kv-token', 'kv'], ['raw token', null]],
    'listed with their parsers',
  );
  t.equal(listed?.find((x) => x.name === 'kv-token')?.token, kvToken, 'the listed token is the one returned at creation');
  const builtIn = (await gql(node.url, admin, TOKENS, { n: 'web-logs' })).data.repository.ingestTokens.find((x: { name: string }) => x.name === 'kv-token');
  t.same(builtIn.parser, { name: 'kv', isBuiltIn: true });

  const assign = await gql(node.url, admin, ASSIGN, { r: 'web-logs', n: 'raw token', p: 'json' });
  t.equal(assign.errors, undefined);
  t.match(assign.data.assignParserToIngestTokenV2, { name: 'raw token', token: UUID, parser: { name: 'json' } });
  await expectError(t, gql(node.url, admin, ASSIGN, { r: 'web-logs', n: 'raw token', p: 'bogus' }), /does not exist/, 'E_VALIDATION', 'assigning an unknown parser');
  await expectError(t, gql(node.url, admin, ASSIGN, { r: 'web-logs', n: 'no-such-token', p: 'kv' }), /does not exist/, 'E_NOT_FOUND', 'assigning to an unknown token');

  const unassign = await gql(node.url, admin, UNASSIGN, { r: 'web-logs', n: 'kv-token' });
  t.equal(unassign.errors, undefined);
  t.same(unassign.data, { unassignIngestToken: { result: true } });
  const after = await tokensOf(admin, 'web-logs');
  t.equal(after?.find((x) => x.name === 'kv-token')?.parser, null, 'unassigned');
  t.equal(after?.find((x) => x.name === 'raw token')?.parser?.name, 'json', 'assigned');

  const rm = await gql(node.url, admin, REMOVE_TOKEN, { r: 'web-logs', n: 'kv-token' });
  t.equal(rm.errors, undefined);
  t.same(rm.data, { removeIngestToken: { result: true } });
  t.same((await tokensOf(admin, 'web-logs'))?.map((x) => x.name).sort(), ['default', 'raw token']);
  await expectError(t, gql(node.url, admin, REMOVE_TOKEN, { r: 'web-logs', n: 'kv-token' }), /does not exist/, 'E_NOT_FOUND', 'removing it again');
  // A removed ingest token is no credential at all any more (401, not the 403 an ingest token gets).
  t.equal((await api(node.url, '/api/v1/health-json', { token: kvToken })).status, 401, 'the removed token is unknown');
});

t.test('member rights over ingest tokens and descriptions', async (t) => {
  const lee = await createUser(node.url, admin, 'lee'); // membership admin
  const max = await createUser(node.url, admin, 'max'); // plain member
  const ned = await createUser(node.url, admin, 'ned'); // not a member
  await gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'lee', a: true, d: false });
  await gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'max', a: false, d: false });

  const byAdmin = await gql(node.url, lee.token, ADD_TOKEN, { r: 'web-logs', n: 'lee-token', p: 'syslog' });
  t.equal(byAdmin.errors, undefined, 'a member with membership-admin rights can add a token');
  t.equal(byAdmin.data.addIngestTokenV3.parser.name, 'syslog');
  t.equal((await gql(node.url, lee.token, ASSIGN, { r: 'web-logs', n: 'lee-token', p: 'accesslog' })).errors, undefined, '... assign a parser');
  t.equal((await gql(node.url, lee.token, UNASSIGN, { r: 'web-logs', n: 'lee-token' })).errors, undefined, '... unassign it');
  t.equal((await gql(node.url, lee.token, ADD_MEMBER, { r: 'web-logs', u: 'ned' })).errors, undefined, '... add a member');
  t.equal((await gql(node.url, lee.token, REMOVE_MEMBER, { r: 'web-logs', u: 'ned' })).errors, undefined, '... remove a member');

  await expectError(t, gql(node.url, max.token, ADD_TOKEN, { r: 'web-logs', n: 'max-token' }), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member adding a token');
  await expectError(t, gql(node.url, max.token, REMOVE_TOKEN, { r: 'web-logs', n: 'lee-token' }), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member removing a token');
  await expectError(t, gql(node.url, max.token, ASSIGN, { r: 'web-logs', n: 'lee-token', p: 'kv' }), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member assigning a parser');
  await expectError(t, gql(node.url, max.token, ADD_MEMBER, { r: 'web-logs', u: 'ned' }), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member adding a member');
  await expectError(t, gql(node.url, max.token, 'mutation { updateDescriptionForSearchDomain(name: "web-logs", newDescription: "by max") { result } }'), /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'E_FORBIDDEN', 'a plain member changing the description');
  // A non-member is told the repository does not exist, not that it lacks rights.
  await expectError(t, gql(node.url, ned.token, ADD_TOKEN, { r: 'web-logs', n: 'ned-token' }), /does not exist or you have no access/, 'E_NOT_FOUND', 'a non-member adding a token');
  t.same(await tokensOf(ned.token, 'web-logs'), undefined, 'a non-member cannot list tokens');

  const byLee = await gql(node.url, lee.token, 'mutation { updateDescriptionForSearchDomain(name: "web-logs", newDescription: "Set by lee") { result } }');
  t.same(byLee.data, { updateDescriptionForSearchDomain: { result: true } }, 'a membership admin can change the description');
  const byRoot = await gql(node.url, admin, 'mutation { updateDescriptionForSearchDomain(name: "web-logs", newDescription: "Set by root") { result } }');
  t.same(byRoot.data, { updateDescriptionForSearchDomain: { result: true } });
  t.equal((await gql(node.url, max.token, '{ repository(name: "web-logs") { description } }')).data.repository.description, 'Set by root', 'the description changed');
  await expectError(t, gql(node.url, admin, 'mutation { updateDescriptionForSearchDomain(name: "nope", newDescription: "x") { result } }'), /does not exist/, 'E_NOT_FOUND', 'unknown repository');

  const byLeeRm = await gql(node.url, lee.token, REMOVE_TOKEN, { r: 'web-logs', n: 'lee-token' });
  t.same(byLeeRm.data, { removeIngestToken: { result: true } }, 'a membership admin can remove a token');
});

t.test('only root creates and deletes repositories', async (t) => {
  const olga = await createUser(node.url, admin, 'olga');
  await gql(node.url, admin, ADD_MEMBER, { r: 'web-logs', u: 'olga', a: true, d: true });
  await expectError(t, gql(node.url, olga.token, CREATE, { n: 'olgas-repo' }), /creating a repository requires a root user/, 'E_FORBIDDEN', 'a normal user creating');
  await expectError(t, gql(node.url, olga.token, 'mutation { deleteSearchDomain(name: "web-logs") { result } }'), /deleting a repository requires a root user/, 'E_FORBIDDEN', 'a member with every right deleting');
  t.equal((await gql(node.url, admin, '{ repository(name: "web-logs") { name } }')).data.repository.name, 'web-logs', 'still there');

  const rootUser = await createUser(node.url, admin, 'root-pat', true);
  const created = await gql(node.url, rootUser.token, CREATE, { n: 'pats-repo' });
  t.equal(created.errors, undefined, 'a root user can create');
  const deleted = await gql(node.url, rootUser.token, 'mutation { deleteSearchDomain(name: "pats-repo", deleteMessage: "bye") { result } }');
  t.same(deleted.data, { deleteSearchDomain: { result: true } }, 'a root user can delete');
});

t.test('deleteSearchDomain', async (t) => {
  const created = await gql(node.url, admin, CREATE, { n: 'short-lived' });
  const defaultToken = created.data.createRepository.repository.ingestTokens[0].token as string;
  const extra = (await gql(node.url, admin, ADD_TOKEN, { r: 'short-lived', n: 'extra', p: 'kv' })).data.addIngestTokenV3.token as string;
  t.equal((await tokensOf(admin, 'short-lived'))?.length, 2);
  t.equal((await api(node.url, '/api/v1/health-json', { token: defaultToken })).status, 403, 'before: a live ingest token is refused as an API token (403)');

  const del = await gql(node.url, admin, 'mutation { deleteSearchDomain(name: "short-lived") { result } }');
  t.equal(del.status, 200);
  t.same(del.data, { deleteSearchDomain: { result: true } });

  await expectError(t, gql(node.url, admin, TOKENS, { n: 'short-lived' }), /does not exist/, 'E_NOT_FOUND', 'its tokens can no longer be listed');
  t.notOk((await gql(node.url, admin, '{ repositories { name } }')).data.repositories.some((r: { name: string }) => r.name === 'short-lived'), 'no longer listed');
  for (const tok of [defaultToken, extra]) t.equal((await api(node.url, '/api/v1/health-json', { token: tok })).status, 401, 'after: the ingest token is unknown');
  await expectError(t, gql(node.url, admin, 'mutation { deleteSearchDomain(name: "short-lived") { result } }'), /does not exist/, 'E_NOT_FOUND', 'deleting it again');

  // Re-creating the name gives a fresh repository with a fresh default token.
  const again = await gql(node.url, admin, CREATE, { n: 'short-lived' });
  const tokens = again.data.createRepository.repository.ingestTokens as { name: string; token: string }[];
  t.same(tokens.map((x) => x.name), ['default'], 'only the new default token is listed');
  t.not(tokens[0]?.token, defaultToken, 'a new token');
});

t.test('cluster', async (t) => {
  const before = Date.now();
  const res = await gql(node.url, admin, '{ cluster { nodes { id name uri uuid isAvailable lastHeartbeat humioVersion } ingestPartitions { id nodeIds } } }');
  t.equal(res.errors, undefined);
  const nodes = res.data.cluster.nodes as Record<string, unknown>[];
  t.equal(nodes.length, 1, 'one node');
  const n = nodes[0]!;
  const status = (await api(node.url, '/api/v1/status')).json();
  t.match(n, { id: 1, name: /\S/, uri: node.url, uuid: UUID, isAvailable: true, lastHeartbeat: RFC3339, humioVersion: status.version });
  t.ok(Math.abs(Date.parse(n.lastHeartbeat as string) - before) < 60_000, 'lastHeartbeat is recent');
  t.same(res.data.cluster.ingestPartitions, Array.from({ length: 24 }, (_, id) => ({ id, nodeIds: [1] })), '24 partitions on node 1');

  const plainUser = await createUser(node.url, admin, 'cluster-viewer');
  const seen = await gql(node.url, plainUser.token, '{ cluster { nodes { id } } }');
  t.same(seen.data, { cluster: { nodes: [{ id: 1 }] } }, 'any user may read the cluster');
});

t.test('updateIngestPartitionScheme', async (t) => {
  const MUT = 'mutation($p: [IngestPartitionInput!]!) { updateIngestPartitionScheme(partitions: $p) { result } }';
  const valid = Array.from({ length: 24 }, (_, id) => ({ id, nodeIds: [1] })).reverse();
  const ok = await gql(node.url, admin, MUT, { p: valid });
  t.equal(ok.errors, undefined);
  t.same(ok.data, { updateIngestPartitionScheme: { result: true } }, 'a valid 24-partition layout is accepted');

  const bad = [
    { what: 'a lowered partition count', p: Array.from({ length: 23 }, (_, id) => ({ id, nodeIds: [1] })), msg: /cannot be lowered/ },
    { what: 'an unknown node', p: Array.from({ length: 24 }, (_, id) => ({ id, nodeIds: id === 5 ? [2] : [1] })), msg: /unknown node id 2/ },
    { what: 'a partition without a node', p: Array.from({ length: 24 }, (_, id) => ({ id, nodeIds: id === 3 ? [] : [1] })), msg: /partition 3: has no host/ },
    { what: 'a gap', p: Array.from({ length: 24 }, (_, id) => ({ id: id === 23 ? 30 : id, nodeIds: [1] })), msg: /missing 23/ },
    { what: 'a duplicate host', p: Array.from({ length: 24 }, (_, id) => ({ id, nodeIds: id === 0 ? [1, 1] : [1] })), msg: /more than once/ },
  ];
  for (const b of bad) await expectError(t, gql(node.url, admin, MUT, { p: b.p }), b.msg, 'E_LAYOUT_INVALID', b.what);

  const plainUser = await createUser(node.url, admin, 'layout-changer');
  await expectError(t, gql(node.url, plainUser.token, MUT, { p: valid }), /requires a root user/, 'E_FORBIDDEN', 'a normal user');

  const rest = await api(node.url, '/api/v1/clusterconfig/ingestpartitions', { token: admin });
  t.same(rest.json(), Array.from({ length: 24 }, (_, partition) => ({ partition, hosts: [1] })), 'the layout is unchanged by the refused calls');
  const gqlView = await gql(node.url, admin, '{ cluster { ingestPartitions { id nodeIds } } }');
  t.equal(gqlView.data.cluster.ingestPartitions.length, 24);
});
