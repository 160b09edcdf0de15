/**
 * Users over GraphQL (the shapes humioctl, old humioctl and the docs send) and the legacy REST user
 * API humiolib calls, against one real node. Subtests run in order and share the node's state.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql, type GqlResult } from '../helpers/http.js';

const node = await startNode(t);
const admin = node.adminToken;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Asserts the answer is HTTP 200 with exactly one error, whose message matches and whose code is `code`. */
type Asserts = Pick<typeof t, 'equal' | 'match'>;

async function expectError(t: Asserts, res: Promise<GqlResult>, message: RegExp, code: string, what: string): Promise<void> {
  const r = await res;
  t.equal(r.status, 200, `${what}: HTTP 200`);
  t.equal(r.errors?.length, 1, `${what}: one error`);
  t.match(r.errors?.[0]?.message, message, `${what}: message`);
  t.equal(r.errors?.[0]?.extensions?.code, code, `${what}: ${code}`);
}

const ADD = 'mutation($u: String!, $r: Boolean, $f: String) { addUser(input: {username: $u, isRoot: $r, fullName: $f}) { user { id username isRoot fullName } } }';
const REMOVE = 'mutation($u: String!) { removeUser(input: {username: $u}) { user { id username isRoot } } }';
const UPDATE = 'mutation($u: String!, $r: Boolean, $f: String) { updateUser(input: {username: $u, isRoot: $r, fullName: $f}) { user { username isRoot fullName } } }';
const ROTATE = 'mutation($id: String!) { rotateUserApiTokenAndGet(input: {id: $id}) }';

t.test('the root user "admin" exists from the first start', async (t) => {
  const res = await gql(node.url, admin, '{ accounts { username } }');
  t.equal(res.status, 200);
  t.equal(res.errors, undefined);
  t.ok((res.data.accounts as { username: string }[]).some((a) => a.username === 'admin'), 'accounts contains admin');
  const users = await gql(node.url, admin, '{ users { username isRoot } }');
  t.same(users.data.users, [{ username: 'admin', isRoot: true }], 'admin is the only user and is root');
});

t.test('the last root user can be neither removed nor demoted', async (t) => {
  await expectError(t, gql(node.url, admin, REMOVE, { u: 'admin' }), /last root user/, 'E_CONFLICT', 'removing the last root');
  await expectError(t, gql(node.url, admin, UPDATE, { u: 'admin', r: false }), /last root user/, 'E_CONFLICT', 'demoting the last root');
  const still = await gql(node.url, admin, '{ users(search: "admin") { username isRoot } }');
  t.same(still.data.users, [{ username: 'admin', isRoot: true }], 'admin is still there and root');
  // Setting isRoot to the value it already has is not a demotion.
  const same = await gql(node.url, admin, UPDATE, { u: 'admin', r: true, f: 'The Admin' });
  t.equal(same.errors, undefined);
  t.same(same.data.updateUser.user, { username: 'admin', isRoot: true, fullName: 'The Admin' });
});

t.test('addUser and addUserV2', async (t) => {
  const before = Date.now();
  const add = await gql(node.url, admin, 'mutation { addUser(input: {username: "alice@example.com"}) { user { id username isRoot } } }');
  t.equal(add.status, 200);
  t.equal(add.errors, undefined);
  t.match(add.data.addUser.user, { id: /^\S+$/, username: 'alice@example.com', isRoot: false });

  const withNames = await gql(node.url, admin, 'mutation { addUser(input: {username: "bob", firstName: "Bob", lastName: "Builder", email: "bob@example.com", company: "ACME", countryCode: "DK", isRoot: false}) { user { username fullName email company countryCode isRoot createdAt } clientMutationId } }');
  t.equal(withNames.errors, undefined);
  t.match(withNames.data.addUser, { user: { username: 'bob', fullName: 'Bob Builder', email: 'bob@example.com', company: 'ACME', countryCode: 'DK', isRoot: false }, clientMutationId: null });

  const v2 = await gql(node.url, admin, 'mutation { addUserV2(input: {username: "carol", isRoot: true, fullName: "Carol C"}) { __typename ... on User { id username isRoot fullName displayName } } }');
  t.equal(v2.errors, undefined);
  t.match(v2.data.addUserV2, { __typename: 'User', username: 'carol', isRoot: true, fullName: 'Carol C', displayName: 'Carol C' });

  // createdAt is an RFC 3339 string close to now.
  const list = await gql(node.url, admin, '{ users { username createdAt } }');
  const after = Date.now();
  for (const u of list.data.users as { username: string; createdAt: string }[]) {
    t.match(u.createdAt, RFC3339, `${u.username}: createdAt is RFC 3339`);
    const ms = Date.parse(u.createdAt);
    t.ok(ms >= before - 60_000 && ms <= after + 1_000, `${u.username}: createdAt ${u.createdAt} is close to now`);
  }
  const alice = (list.data.users as { username: string; createdAt: string }[]).find((u) => u.username === 'alice@example.com')!;
  t.ok(Date.parse(alice.createdAt) >= before - 1_000 && Date.parse(alice.createdAt) <= after + 1_000, 'a new user was created just now');
});

t.test('duplicate and invalid user names', async (t) => {
  await expectError(t, gql(node.url, admin, ADD, { u: 'alice@example.com' }), /already exists/, 'E_CONFLICT', 'addUser duplicate');
  await expectError(t, gql(node.url, admin, 'mutation { addUserV2(input: {username: "carol"}) { __typename } }'), /already exists/, 'E_CONFLICT', 'addUserV2 duplicate');
  await expectError(t, gql(node.url, admin, ADD, { u: '' }), /username/, 'E_VALIDATION', 'empty username');
  await expectError(t, gql(node.url, admin, ADD, { u: 'has space' }), /username/, 'E_VALIDATION', 'username with a space');
  await expectError(t, gql(node.url, admin, ADD, { u: 'x'.repeat(255) }), /username/, 'E_VALIDATION', 'username of 255 characters');
  await expectError(t, gql(node.url, admin, ADD, { u: 'long', f: 'f'.repeat(1025) }), /fullName/, 'E_VALIDATION', 'fullName too long');
  const users = await gql(node.url, admin, '{ users { username } }');
  t.equal((users.data.users as unknown[]).length, 4, 'nothing was added by the failed calls');
});

t.test('users, users(search:), user(id:) and viewer', async (t) => {
  const dave = await createUser(node.url, admin, 'dave');

  const all = await gql(node.url, admin, '{ users { username } }');
  t.same(
    (all.data.users as { username: string }[]).map((u) => u.username),
    ['admin', 'alice@example.com', 'bob', 'carol', 'dave'],
    'root sees every user, sorted by name',
  );
  const search = await gql(node.url, admin, 'query($s: String) { users(search: $s) { username } }', { s: 'AL' });
  t.same(search.data.users, [{ username: 'alice@example.com' }], 'search is a case-insensitive substring match');
  const none = await gql(node.url, admin, '{ users(search: "nobody-has-this") { username } }');
  t.same(none.data.users, []);

  const byId = await gql(node.url, admin, 'query($id: String!) { user(id: $id) { username } }', { id: dave.id });
  t.same(byId.data.user, { username: 'dave' });
  const noId = await gql(node.url, admin, '{ user(id: "no-such-id") { username } }');
  t.equal(noId.errors, undefined);
  t.equal(noId.data.user, null);

  // A normal user sees only itself.
  const own = await gql(node.url, dave.token, '{ users { username } accounts { username } }');
  t.same(own.data, { users: [{ username: 'dave' }], accounts: [{ username: 'dave' }] });

  const v1 = await gql(node.url, dave.token, '{ viewer { id username isRoot } }');
  t.same(v1.data.viewer, { id: dave.id, username: 'dave', isRoot: false });
  const v2 = await gql(node.url, admin, '{ viewer { username isRoot } }');
  t.same(v2.data.viewer, { username: 'local-admin', isRoot: true });
  const carol = await gql(node.url, admin, '{ users(search: "carol") { id } }');
  const carolToken = (await gql(node.url, admin, ROTATE, { id: carol.data.users[0].id })).data.rotateUserApiTokenAndGet as string;
  const v3 = await gql(node.url, carolToken, '{ viewer { username isRoot fullName createdAt } }');
  t.match(v3.data.viewer, { username: 'carol', isRoot: true, fullName: 'Carol C', createdAt: RFC3339 });
});

t.test('currentUser works for users and for the local admin token', async (t) => {
  const erin = await createUser(node.url, admin, 'erin');
  const u = await gql(node.url, erin.token, '{ currentUser { id username displayName isRoot createdAt } }');
  t.equal(u.errors, undefined);
  t.match(u.data?.currentUser, { id: erin.id, username: 'erin', displayName: 'erin', isRoot: false, createdAt: RFC3339 });
  // currentUser is typed User!, whose displayName is non-null: the local admin must have one too.
  const a = await gql(node.url, admin, '{ currentUser { username displayName isRoot } }');
  t.equal(a.errors, undefined, 'no error for the local admin token');
  t.match(a.data?.currentUser, { username: 'local-admin', displayName: String, isRoot: true });
});

t.test('updateUser', async (t) => {
  const frank = await createUser(node.url, admin, 'frank');
  const by = await gql(node.url, admin, UPDATE, { u: 'frank', f: 'Frank Root-Set' });
  t.equal(by.errors, undefined);
  t.same(by.data.updateUser.user, { username: 'frank', isRoot: false, fullName: 'Frank Root-Set' });

  const self = await gql(node.url, frank.token, UPDATE, { u: 'frank', f: 'Frank Himself' });
  t.equal(self.errors, undefined, 'a normal user can update itself');
  t.same(self.data.updateUser.user, { username: 'frank', isRoot: false, fullName: 'Frank Himself' });
  const typename = await gql(node.url, frank.token, 'mutation { updateUser(input: {username: "frank", company: "Self Inc"}) { __typename } }');
  t.same(typename.data, { updateUser: { __typename: 'UpdateUserMutation' } }, 'humioctl selects only __typename');

  await expectError(t, gql(node.url, frank.token, UPDATE, { u: 'frank', r: true }), /isRoot requires a root user/, 'E_FORBIDDEN', 'a normal user making itself root');
  await expectError(t, gql(node.url, frank.token, UPDATE, { u: 'bob', f: 'Hacked' }), /another user requires a root user/, 'E_FORBIDDEN', 'a normal user updating another');
  await expectError(t, gql(node.url, frank.token, UPDATE, { u: 'no-such-user', f: 'x' }), /requires a root user/, 'E_FORBIDDEN', 'a normal user updating an unknown user');
  await expectError(t, gql(node.url, admin, UPDATE, { u: 'no-such-user', f: 'x' }), /does not exist/, 'E_NOT_FOUND', 'root updating an unknown user');

  const check = await gql(node.url, admin, '{ users(search: "bob") { fullName } f: users(search: "frank") { isRoot fullName company } }');
  t.same(check.data, { users: [{ fullName: 'Bob Builder' }], f: [{ isRoot: false, fullName: 'Frank Himself', company: 'Self Inc' }] }, 'nothing else changed');

  // Root may promote and demote (while another root remains).
  const promote = await gql(node.url, admin, UPDATE, { u: 'frank', r: true });
  t.equal(promote.data.updateUser.user.isRoot, true);
  t.equal((await api(node.url, '/api/v1/health', { token: frank.token })).status, 200, 'the promoted user is root at once');
  const demote = await gql(node.url, admin, UPDATE, { u: 'frank', r: false });
  t.equal(demote.data.updateUser.user.isRoot, false);
  t.equal((await api(node.url, '/api/v1/health', { token: frank.token })).status, 403, 'the demoted user is not root at once');
});

t.test('removeUser', async (t) => {
  const gina = await createUser(node.url, admin, 'gina');
  t.equal((await gql(node.url, gina.token, '{ viewer { username } }')).data.viewer.username, 'gina');

  await expectError(t, gql(node.url, gina.token, REMOVE, { u: 'bob' }), /requires a root user/, 'E_FORBIDDEN', 'a normal user removing another');
  await expectError(t, gql(node.url, gina.token, REMOVE, { u: 'gina' }), /requires a root user/, 'E_FORBIDDEN', 'a normal user removing itself');

  const rm = await gql(node.url, admin, REMOVE, { u: 'gina' });
  t.equal(rm.errors, undefined);
  t.same(rm.data.removeUser.user, { id: gina.id, username: 'gina', isRoot: false }, 'returns the removed user');

  const after = await api(node.url, '/graphql', { token: gina.token, body: JSON.stringify({ query: '{ viewer { username } }' }) });
  t.equal(after.status, 401, "the removed user's token stops working");
  t.match(after.headers.get('content-type'), /^text\/plain/);
  t.equal((await gql(node.url, admin, '{ users(search: "gina") { username } }')).data.users.length, 0, 'no longer listed');
  await expectError(t, gql(node.url, admin, REMOVE, { u: 'gina' }), /does not exist/, 'E_NOT_FOUND', 'removing it again');

  // The name can be used again, and the old token does not come back with it.
  const again = await gql(node.url, admin, ADD, { u: 'gina' });
  t.equal(again.errors, undefined);
  t.not(again.data.addUser.user.id, gina.id, 'a new id');
  t.equal((await api(node.url, '/api/v1/health-json', { token: gina.token })).status, 401, 'the old token still does not work');

  // With two root users, one may go; the remaining one is then the last.
  const r2 = await createUser(node.url, admin, 'root-two', true);
  const carolGone = await gql(node.url, admin, REMOVE, { u: 'carol' });
  t.equal(carolGone.errors, undefined, 'a root user can be removed while others remain');
  const adminGone = await gql(node.url, r2.token, REMOVE, { u: 'admin' });
  t.equal(adminGone.errors, undefined, 'even "admin" can be removed while another root remains');
  await expectError(t, gql(node.url, r2.token, REMOVE, { u: 'root-two' }), /last root user/, 'E_CONFLICT', 'the remaining root cannot remove itself');
  await expectError(t, gql(node.url, admin, UPDATE, { u: 'root-two', r: false }), /last root user/, 'E_CONFLICT', 'the remaining root cannot be demoted');
  t.equal((await gql(node.url, admin, '{ viewer { isRoot } }')).data.viewer.isRoot, true, 'the local admin token stays root regardless');
});

t.test('rotateUserApiTokenAndGet', async (t) => {
  const hank = await createUser(node.url, admin, 'hank');
  const ivy = await createUser(node.url, admin, 'ivy');

  const byRoot = await gql(node.url, admin, ROTATE, { id: hank.id });
  t.equal(byRoot.errors, undefined);
  const t2 = byRoot.data.rotateUserApiTokenAndGet as string;
  t.type(t2, 'string');
  t.ok(t2.length >= 32, 'a long token');
  t.not(t2, hank.token, 'a new token');
  t.equal((await api(node.url, '/api/v1/health-json', { token: hank.token })).status, 401, 'the old token stops working');
  t.equal((await api(node.url, '/api/v1/health-json', { token: t2 })).status, 200, 'the new token works');

  const self = await gql(node.url, t2, ROTATE, { id: hank.id });
  t.equal(self.errors, undefined, 'a normal user can rotate its own token');
  const t3 = self.data.rotateUserApiTokenAndGet as string;
  t.not(t3, t2);
  t.equal((await api(node.url, '/api/v1/health-json', { token: t2 })).status, 401, 'the previous token stops working');
  t.equal((await gql(node.url, t3, '{ viewer { username } }')).data.viewer.username, 'hank', 'the new token is the same user');

  await expectError(t, gql(node.url, t3, ROTATE, { id: ivy.id }), /requires a root user/, 'E_FORBIDDEN', "rotating another user's token");
  t.equal((await api(node.url, '/api/v1/health-json', { token: ivy.token })).status, 200, "the other user's token still works");
  await expectError(t, gql(node.url, admin, ROTATE, { id: 'no-such-id' }), /does not exist/, 'E_NOT_FOUND', 'rotating for an unknown id');
  // The answer carries the new token, but no error message ever does.
  const refused = await gql(node.url, t3, ROTATE, { id: ivy.id });
  t.notOk(JSON.stringify(refused).includes(t3), 'the error does not echo the token');
});

t.test('a normal user cannot add users', async (t) => {
  const jack = await createUser(node.url, admin, 'jack');
  await expectError(t, gql(node.url, jack.token, ADD, { u: 'by-jack' }), /adding a user requires a root user/, 'E_FORBIDDEN', 'addUser by a normal user');
  await expectError(t, gql(node.url, jack.token, 'mutation { addUserV2(input: {username: "by-jack"}) { __typename } }'), /requires a root user/, 'E_FORBIDDEN', 'addUserV2 by a normal user');
  t.equal((await gql(node.url, admin, '{ users(search: "by-jack") { username } }')).data.users.length, 0);
});

t.test('the legacy REST user API', async (t) => {
  const created = await api(node.url, '/api/v1/users', { token: admin, body: JSON.stringify({ email: 'rest@example.com', isRoot: false }) });
  t.equal(created.status, 200);
  t.match(created.headers.get('content-type'), /^application\/json/);
  const u = created.json();
  t.match(u, { userID: /^\S+$/, email: 'rest@example.com', username: 'rest@example.com', isRoot: false, createdAt: RFC3339 });

  const rootUser = await api(node.url, '/api/v1/users', { token: admin, body: JSON.stringify({ email: 'rest-root@example.com', isRoot: true }) });
  t.equal(rootUser.status, 200);
  t.equal(rootUser.json().isRoot, true);

  const list = await api(node.url, '/api/v1/users', { token: admin });
  t.equal(list.status, 200);
  t.match(list.headers.get('content-type'), /^application\/json/);
  const users = list.json() as { userID: string; email: string }[];
  t.ok(Array.isArray(users));
  for (const x of users) t.match(x, { userID: String, email: String }, 'every entry has userID and email');
  t.ok(users.some((x) => x.userID === u.userID && x.email === 'rest@example.com'), 'the new user is listed');

  // The REST user is the same user GraphQL sees.
  const viaGql = await gql(node.url, admin, '{ users(search: "rest@") { id username } }');
  t.same(viaGql.data.users, [{ id: u.userID, username: 'rest@example.com' }]);

  const dup = await api(node.url, '/api/v1/users', { token: admin, body: JSON.stringify({ email: 'rest@example.com' }) });
  t.equal(dup.status, 409, 'a duplicate is a conflict');
  t.match(dup.headers.get('content-type'), /^text\/plain/);
  t.equal((await api(node.url, '/api/v1/users', { token: admin, body: '{"isRoot": true}' })).status, 400, 'email is required');
  t.equal((await api(node.url, '/api/v1/users', { token: admin, body: '{"email": "x@y", "isRoot": "yes"}' })).status, 400, 'isRoot must be a boolean');
  t.equal((await api(node.url, '/api/v1/users', { token: admin, body: '{not json' })).status, 400, 'malformed JSON');

  const plain = await createUser(node.url, admin, 'rest-plain');
  t.equal((await api(node.url, '/api/v1/users', { token: plain.token })).status, 403, 'a normal user cannot list');
  t.equal((await api(node.url, '/api/v1/users', { token: plain.token, body: JSON.stringify({ email: 'z@example.com' }) })).status, 403, 'a normal user cannot create');
  t.equal((await api(node.url, `/api/v1/users/${encodeURIComponent(u.userID)}`, { token: plain.token, method: 'DELETE' })).status, 403, 'a normal user cannot delete');

  const del = await api(node.url, `/api/v1/users/${encodeURIComponent(u.userID)}`, { token: admin, method: 'DELETE' });
  t.equal(del.status, 200);
  t.match(del.headers.get('content-type'), /^application\/json/);
  t.match(del.json(), { userID: u.userID, email: 'rest@example.com' }, 'DELETE answers with the removed user as JSON');
  const afterList = (await api(node.url, '/api/v1/users', { token: admin })).json() as { userID: string }[];
  t.notOk(afterList.some((x) => x.userID === u.userID), 'no longer listed');
  const again = await api(node.url, `/api/v1/users/${encodeURIComponent(u.userID)}`, { token: admin, method: 'DELETE' });
  t.equal(again.status, 404, 'deleting it again is 404');
  t.match(again.headers.get('content-type'), /^text\/plain/);
});
