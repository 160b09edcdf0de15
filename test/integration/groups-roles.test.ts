/**
 * Groups and roles against a real node over HTTP: humioctl's group and role documents, the
 * product's mutations for the rest, and what a role assigned to a group for a repository or a view
 * gives the group's users (searching, reading ingest tokens, changing retention; each change of
 * parsers, ingest tokens, alerts, actions, saved searches and files by its own permission), taken away again
 * when the user leaves the group, the role loses ReadAccess or goes, or the group goes. A restart
 * keeps all of it (global state).
 */
import t from 'tap';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { api, createUser, gql } from '../helpers/http.js';
import { countOf, createRepo, ingestStructured, mustGql, type KnownEvent } from '../helpers/query.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';
import { uploadFile } from '../helpers/files.js';

t.setTimeout(180_000);

const doc = (operation: string): string => HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation)!.document;

const CONFIG = '[health]\ngrace_period_seconds = 600\n';
const node = await startNode(t, { config: CONFIG });
const admin = node.adminToken;
const logs = await createRepo(node.url, admin, 'logs');
const other = await createRepo(node.url, admin, 'other');
const now = Date.now();
const ev = (n: number, tag: string): KnownEvent[] => Array.from({ length: n }, (_, i) => ({ timestamp: now - 60_000 + i, rawstring: `${tag} ${i}`, attributes: { level: i % 2 === 0 ? 'error' : 'info' }, tags: { src: tag } }));
await ingestStructured(node.url, logs.ingestToken, ev(12, 'logs'));
await ingestStructured(node.url, other.ingestToken, ev(5, 'other'));
const gus = await createUser(node.url, admin, 'gus');

/** What gus gets from the query endpoint of `repo`: the count, or the HTTP status when refused. */
async function gusCount(n: TestNode, repo: string): Promise<number | string> {
  const r = await api(n.url, `/api/v1/repositories/${repo}/query`, { token: gus.token, headers: { accept: 'application/json' }, body: JSON.stringify({ queryString: 'count()', start: '1h' }) });
  return r.status === 200 ? Number(r.json()[0]._count) : `HTTP ${r.status}`;
}

const tokensOf = async (n: TestNode, repo: string): Promise<string[]> =>
  (await mustGql(n.url, gus.token, 'query($r: String!) { repository(name: $r) { ingestTokens { token } } }', { r: repo })).repository.ingestTokens.map((x: { token: string }) => x.token);

let groupId = '';
let readerId = '';

t.test("humioctl's role and group documents work", async (t) => {
  t.strictSame((await mustGql(node.url, admin, doc('ListGroups'))).groupsPage.page, [], 'no groups at first');
  t.strictSame((await mustGql(node.url, admin, doc('ListRoles'))).roles, [], 'no roles at first');
  const created = (await mustGql(node.url, admin, doc('CreateRole'), { RoleName: 'reader', ViewPermissions: ['ReadAccess'], OrganizationPermissions: null, SystemPermissions: ['ReadHealthCheck'] })).createRole.role;
  t.match(created, { displayName: 'reader', viewPermissions: ['ReadAccess'], organizationPermissions: [], systemPermissions: ['ReadHealthCheck'] });
  readerId = created.id;
  t.strictSame((await mustGql(node.url, admin, doc('GetRoleByID'), { RoleID: readerId })).role, created);
  const listed = (await mustGql(node.url, admin, doc('ListRoles'))).roles;
  t.strictSame(listed, [created]);

  const g = (await mustGql(node.url, admin, 'mutation { addGroup(displayName: "oncall", lookupName: "ldap-oncall") { group { id displayName lookupName userCount } } }')).addGroup.group;
  t.match(g, { displayName: 'oncall', lookupName: 'ldap-oncall', userCount: 0 });
  groupId = g.id;
  await mustGql(node.url, admin, 'mutation { addGroup(displayName: "another") { group { id } } }');
  t.strictSame((await mustGql(node.url, admin, doc('ListGroups'))).groupsPage.page, [
    { id: (await mustGql(node.url, admin, '{ groupByDisplayName(displayName: "another") { id } }')).groupByDisplayName.id, displayName: 'another' },
    { id: groupId, displayName: 'oncall' },
  ], 'ListGroups pages by name');
  const paged = (await mustGql(node.url, admin, '{ groupsPage(pageNumber: 2, pageSize: 1) { pageInfo { number totalNumberOfRows total } page { displayName } } }')).groupsPage;
  t.strictSame(paged, { pageInfo: { number: 2, totalNumberOfRows: 2, total: 2 }, page: [{ displayName: 'oncall' }] });
  t.strictSame((await mustGql(node.url, admin, '{ groupsPage(search: "CALL", pageNumber: 1, pageSize: 10) { page { displayName } } }')).groupsPage.page, [{ displayName: 'oncall' }], 'search ignores case');

  await mustGql(node.url, admin, doc('AddUserToGroup'), { GroupID: groupId, UserID: gus.id });
  const withUser = (await mustGql(node.url, admin, 'query($g: String!) { group(groupId: $g) { userCount users { username } } }', { g: groupId })).group;
  t.strictSame(withUser, { userCount: 1, users: [{ username: 'gus' }] });
});

t.test('bad input and non-root callers get clear errors', async (t) => {
  const noGroup = await gql(node.url, admin, doc('AddUserToGroup'), { GroupID: 'nope', UserID: gus.id });
  t.match(noGroup.errors?.[0], { message: /group "nope" does not exist/, extensions: { code: 'E_NOT_FOUND' } });
  const noUser = await gql(node.url, admin, doc('AddUserToGroup'), { GroupID: groupId, UserID: 'nobody' });
  t.match(noUser.errors?.[0]?.message, /users\[0\]: user "nobody" does not exist/);
  const badPerm = await gql(node.url, admin, doc('CreateRole'), { RoleName: 'x', ViewPermissions: ['ReadEverything'] });
  t.match(badPerm.errors?.[0]?.message, /ReadEverything/, 'an unknown permission is refused naming it');
  const dupRole = await gql(node.url, admin, doc('CreateRole'), { RoleName: 'reader', ViewPermissions: [] });
  t.match(dupRole.errors?.[0]?.message, /a role named "reader" already exists/);
  const dupGroup = await gql(node.url, admin, 'mutation { addGroup(displayName: "oncall") { group { id } } }');
  t.match(dupGroup.errors?.[0]?.message, /a group named "oncall" already exists/);
  const emptyName = await gql(node.url, admin, 'mutation { addGroup(displayName: "") { group { id } } }');
  t.match(emptyName.errors?.[0]?.message, /displayName: must be 1 to 200 characters/);
  const byUser = await gql(node.url, gus.token, 'mutation { addGroup(displayName: "mine") { group { id } } }');
  t.match(byUser.errors?.[0], { message: /adding a group requires a root user/, extensions: { code: 'E_FORBIDDEN' } });
  const selfAdd = await gql(node.url, gus.token, doc('AddUserToGroup'), { GroupID: groupId, UserID: gus.id });
  t.match(selfAdd.errors?.[0]?.message, /requires a root user/);
  const selfGrant = await gql(node.url, gus.token, 'mutation($g: String!, $r: String!) { assignRoleToGroup(input: {viewId: "logs", groupId: $g, roleId: $r}) { group { role { id } } } }', { g: groupId, r: readerId });
  t.match(selfGrant.errors?.[0]?.message, /repository or view "logs" does not exist or you may not change who has access to it/, 'a user cannot grant itself access');
  const noRemove = await gql(node.url, admin, doc('RemoveUserFromGroup'), { GroupID: (await mustGql(node.url, admin, '{ groupByDisplayName(displayName: "another") { id } }')).groupByDisplayName.id, UserID: gus.id });
  t.match(noRemove.errors?.[0]?.message, /user "[^"]+" is not in group "another"/);
});

t.test('a role assigned to the group for a repository gives its users access there, and only there', async (t) => {
  t.equal(await gusCount(node, 'logs'), 'HTTP 404', 'no access before the assignment');
  t.strictSame(await tokensOf(node, 'logs').catch((e: Error) => e.message.match(/does not exist or you have no access/)?.[0]), 'does not exist or you have no access');
  const assigned = (await mustGql(node.url, admin, 'mutation($g: String!, $r: String!, $v: String!) { assignRoleToGroup(input: {viewId: $v, groupId: $g, roleId: $r}) { group { searchDomain { name } role { displayName } } } }', { g: groupId, r: readerId, v: logs.id })).assignRoleToGroup.group;
  t.strictSame(assigned, { searchDomain: { name: 'logs' }, role: { displayName: 'reader' } });
  t.equal(await gusCount(node, 'logs'), 12, 'the group member searches the repository');
  t.strictSame(await tokensOf(node, 'logs'), [logs.ingestToken], 'and reads its ingest tokens');
  t.equal(await gusCount(node, 'other'), 'HTTP 404', 'not another repository');
  const repos = (await mustGql(node.url, gus.token, '{ repositories { name } }')).repositories.map((r: { name: string }) => r.name);
  t.strictSame(repos, ['logs'], 'the repository is listed for the user');
  const roles = (await mustGql(node.url, admin, 'query($g: String!) { group(groupId: $g) { searchDomainCount roles { searchDomain { name } role { displayName } } } }', { g: groupId })).group;
  t.strictSame(roles, { searchDomainCount: 1, roles: [{ searchDomain: { name: 'logs' }, role: { displayName: 'reader' } }] });
  const roleUsers = (await mustGql(node.url, admin, 'query($r: String!) { role(roleId: $r) { groupsCount usersCount users { username } } }', { r: readerId })).role;
  t.strictSame(roleUsers, { groupsCount: 1, usersCount: 1, users: [{ username: 'gus' }] });

  const retention = await gql(node.url, gus.token, doc('UpdateTimeBasedRetention'), { RepositoryName: 'logs', RetentionInDays: 30 });
  t.match(retention.errors?.[0]?.message, /requires root, deletion rights on it, or a group role with ReadAccess and ChangeRetention there/, 'reading is not changing retention');
  await mustGql(node.url, admin, doc('UpdateRole'), { RoleID: readerId, RoleName: 'reader', ViewPermissions: ['ReadAccess', 'ChangeRetention'] });
  await mustGql(node.url, gus.token, doc('UpdateTimeBasedRetention'), { RepositoryName: 'logs', RetentionInDays: 30 });
  t.equal((await mustGql(node.url, admin, '{ repository(name: "logs") { timeBasedRetention } }')).repository.timeBasedRetention, 30, 'ChangeRetention lets the group member change retention');
  const members = await gql(node.url, gus.token, 'mutation { addMember(searchDomainName: "logs", username: "gus", hasMembershipAdminRights: true) { clientMutationId } }');
  t.match(members.errors?.[0]?.message, /requires root, member-admin rights on it, or a group role with ReadAccess and/, 'without ChangeUserAccess the member cannot change members');

  await mustGql(node.url, admin, doc('UpdateRole'), { RoleID: readerId, RoleName: 'reader', ViewPermissions: ['ChangeRetention'] });
  t.equal(await gusCount(node, 'logs'), 'HTTP 404', 'a role without ReadAccess gives nothing');
  await mustGql(node.url, admin, doc('UpdateRole'), { RoleID: readerId, RoleName: 'reader', ViewPermissions: ['ReadAccess'] });
  t.equal(await gusCount(node, 'logs'), 12);
});

t.test('leaving the group takes the access away; joining again gives it back', async (t) => {
  await mustGql(node.url, admin, doc('RemoveUserFromGroup'), { GroupID: groupId, UserID: gus.id });
  t.equal(await gusCount(node, 'logs'), 'HTTP 404');
  const refused = await gql(node.url, gus.token, 'query($r: String!) { repository(name: $r) { ingestTokens { token } } }', { r: 'logs' });
  t.match(refused.errors?.[0]?.message, /does not exist or you have no access/, 'nor its ingest tokens');
  await mustGql(node.url, admin, doc('AddUserToGroup'), { GroupID: groupId, UserID: 'gus' });
  t.equal(await gusCount(node, 'logs'), 12, 'added again (by user name)');
});

t.test("a role's permissions, one per kind of change: reading alone changes nothing; each permission opens its change and no other", async (t) => {
  const setPerms = (perms: string[]): Promise<unknown> => mustGql(node.url, admin, doc('UpdateRole'), { RoleID: readerId, RoleName: 'reader', ViewPermissions: ['ReadAccess', ...perms] });
  /** gus's GraphQL call: its data, or the first error's message. */
  const asGus = async (query: string, variables: Record<string, unknown> = {}): Promise<{ data?: Record<string, unknown>; error?: string }> => {
    const r = await gql(node.url, gus.token, query, variables);
    const error = r.errors?.[0]?.message;
    return error !== undefined ? { error } : { data: r.data };
  };
  const PARSER = 'mutation($n: String!) { createParserV2(input: {name: $n, script: "parseJson()", repositoryName: "logs", testCases: [], fieldsToTag: [], fieldsToBeRemovedBeforeParsing: []}) { id } }';
  const TOKEN = 'mutation($n: String!) { addIngestTokenV3(input: {repositoryName: "logs", name: $n}) { name } }';
  const ALERT = 'mutation($n: String!) { createFilterAlert(input: {viewName: "logs", name: $n, queryString: "level=error", actionIdsOrNames: [], labels: [], enabled: false, queryOwnershipType: User}) { id } }';
  const DEL_ALERT = 'mutation($id: String!) { deleteFilterAlert(input: {viewName: "logs", id: $id}) }';
  const ACTION = 'mutation($n: String!) { createWebhookAction(input: {viewName: "logs", name: $n, url: "https://hooks.example.com/x", method: "POST", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id } }';
  const DEL_ACTION = 'mutation($id: String!) { deleteAction(input: {viewName: "logs", id: $id}) }';
  const SAVED = 'mutation($n: String!) { createSavedQuery(input: {viewName: "logs", name: $n, queryString: "level=error"}) { savedQuery { id } } }';
  const DEL_SAVED = 'mutation($id: String!) { deleteSavedQuery(input: {viewName: "logs", id: $id}) { result } }';
  const upload = (name: string): Promise<{ status: number; text: string }> => uploadFile(node.url, '/api/v1/repositories/logs/files', gus.token, name, 'k,v\na,1\n');
  const REMOVE_FILE = 'mutation($f: String!) { removeFile(name: "logs", fileName: $f) { __typename } }';

  await setPerms([]);
  t.match((await asGus(PARSER, { n: 'p1' })).error, /changing parsers in "logs" requires root, member-admin rights on it, or a group role with ReadAccess and ChangeParsers there/);
  t.match((await asGus(TOKEN, { n: 't1' })).error, /adding an ingest token in "logs" requires .* ChangeIngestTokens there/);
  t.match((await asGus(ALERT, { n: 'a1' })).error, /creating an alert in "logs" requires root, membership of it, or a group role with ReadAccess and one of ChangeTriggers, CreateTriggers, ChangeTriggersAndActions there/);
  t.match((await asGus(ACTION, { n: 'h1' })).error, /creating an action in "logs" requires .*one of ChangeActions, CreateActions, ChangeTriggersAndActions there/);
  t.match((await asGus(SAVED, { n: 's1' })).error, /creating a saved search in "logs" requires .*one of ChangeSavedQueries, CreateSavedQueries there/);
  const refusedUpload = await upload('owners.csv');
  t.equal(refusedUpload.status, 403, 'a file upload is refused');
  t.match(refusedUpload.text, /uploading a file in "logs" requires .*one of ChangeFiles, CreateFiles there/);
  t.equal(await gusCount(node, 'logs'), 12, 'and searching still works');

  await setPerms(['ChangeParsers', 'ChangeIngestTokens', 'CreateTriggers', 'CreateActions', 'CreateSavedQueries', 'CreateFiles']);
  t.ok((await asGus(PARSER, { n: 'p1' })).data, 'ChangeParsers: a parser');
  t.ok((await asGus(TOKEN, { n: 't1' })).data, 'ChangeIngestTokens: an ingest token');
  const alert = await asGus(ALERT, { n: 'a1' });
  t.ok(alert.data, `CreateTriggers: an alert ${alert.error ?? ''}`);
  const action = await asGus(ACTION, { n: 'h1' });
  t.ok(action.data, `CreateActions: an action ${action.error ?? ''}`);
  const saved = await asGus(SAVED, { n: 's1' });
  t.ok(saved.data, `CreateSavedQueries: a saved search ${saved.error ?? ''}`);
  t.equal((await upload('owners.csv')).status, 200, 'CreateFiles: a new file');
  const alertId = (alert.data?.createFilterAlert as { id: string }).id;
  const actionId = (action.data?.createWebhookAction as { id: string }).id;
  const savedId = (saved.data?.createSavedQuery as { savedQuery: { id: string } }).savedQuery.id;
  t.match((await asGus(DEL_ALERT, { id: alertId })).error, /deleting an alert in "logs" requires .*DeleteTriggers/, 'creating is not deleting');
  t.match((await asGus(DEL_ACTION, { id: actionId })).error, /deleting an action in "logs" requires .*DeleteActions/);
  t.match((await asGus(DEL_SAVED, { id: savedId })).error, /deleting a saved search in "logs" requires .*DeleteSavedQueries/);
  const replace = await upload('owners.csv');
  t.equal(replace.status, 403, 'replacing a file is updating it');
  t.match(replace.text, /replacing a file in "logs" requires .*one of ChangeFiles, UpdateFiles there/);
  t.match((await asGus(REMOVE_FILE, { f: 'owners.csv' })).error, /removing a file in "logs" requires .*one of ChangeFiles, DeleteFiles there/);

  await setPerms(['DeleteTriggers', 'ChangeTriggersAndActions', 'ChangeSavedQueries', 'ChangeFiles']);
  t.match((await asGus(PARSER, { n: 'p2' })).error, /ChangeParsers/, 'a permission taken away is gone');
  t.ok((await asGus(DEL_ALERT, { id: alertId })).data, 'DeleteTriggers: the alert goes');
  t.ok((await asGus(DEL_ACTION, { id: actionId })).data, 'ChangeTriggersAndActions: the action goes');
  t.ok((await asGus(DEL_SAVED, { id: savedId })).data, 'ChangeSavedQueries: the saved search goes');
  t.equal((await upload('owners.csv')).status, 200, 'ChangeFiles: the file is replaced');
  t.ok((await asGus(REMOVE_FILE, { f: 'owners.csv' })).data, 'and removed');
  const left = (await mustGql(node.url, admin, '{ searchDomain(name: "logs") { filterAlerts { id } actions { id } savedQueries { id } } }')).searchDomain;
  t.strictSame(left, { filterAlerts: [], actions: [], savedQueries: [] }, 'what was deleted is gone');
  await setPerms([]);
});

t.test('a role for a view: the group member searches the view and sees what its filters let through', async (t) => {
  await mustGql(node.url, admin, 'mutation { createView(name: "errs", connections: [{repositoryName: "logs", filter: "level=error"}, {repositoryName: "other", filter: "*"}]) { name } }');
  t.equal(await gusCount(node, 'errs'), 'HTTP 404');
  await mustGql(node.url, admin, 'mutation($g: String!, $r: String!) { assignRoleToGroup(input: {viewId: "errs", groupId: $g, roleId: $r}) { group { role { id } } } }', { g: groupId, r: readerId });
  t.equal(await gusCount(node, 'errs'), 6 + 5, 'the errors of logs and everything of other');
  t.equal(await gusCount(node, 'other'), 'HTTP 404', 'but not the view\'s repositories themselves');
  await mustGql(node.url, admin, 'mutation($g: String!, $r: String!) { unassignRoleFromGroup(input: {viewId: "errs", groupId: $g, roleId: $r}) { group { id } } }', { g: groupId, r: readerId });
  t.equal(await gusCount(node, 'errs'), 'HTTP 404', 'unassigned');
  const again = await gql(node.url, admin, 'mutation($g: String!, $r: String!) { unassignRoleFromGroup(input: {viewId: "errs", groupId: $g, roleId: $r}) { group { id } } }', { g: groupId, r: readerId });
  t.match(again.errors?.[0]?.message, /group "oncall" does not have role "reader" on view "errs"/);
});

t.test('groups and roles survive a restart', async (t) => {
  await node.stop();
  const again = await startNode(t, { dataDir: node.dataDir, config: CONFIG });
  t.equal(await gusCount(again, 'logs'), 12, 'the grant holds after the restart');
  t.equal((await mustGql(again.url, again.adminToken, doc('ListRoles'))).roles.length, 1);

  // The role goes: the assignment with it.
  await mustGql(again.url, again.adminToken, doc('RemoveRoleByID'), { RoleID: readerId });
  t.equal(await gusCount(again, 'logs'), 'HTTP 404', 'the removed role grants nothing');
  t.strictSame((await mustGql(again.url, again.adminToken, 'query($g: String!) { group(groupId: $g) { roles { role { id } } } }', { g: groupId })).group.roles, []);

  // The group goes: its users lose its roles.
  const admins = (await mustGql(again.url, again.adminToken, doc('CreateRole'), { RoleName: 'admins', ViewPermissions: ['ReadAccess', 'ChangeUserAccess'] })).createRole.role;
  await mustGql(again.url, again.adminToken, 'mutation($g: String!, $r: String!) { assignRoleToGroup(input: {viewId: "other", groupId: $g, roleId: $r}) { group { role { id } } } }', { g: groupId, r: admins.id });
  t.equal(await gusCount(again, 'other'), 5);
  // ChangeUserAccess: the group member administers the repository's members.
  await mustGql(again.url, gus.token, 'mutation { addMember(searchDomainName: "other", username: "gus") { clientMutationId } }');
  await mustGql(again.url, gus.token, 'mutation { removeMember(searchDomainName: "other", username: "gus") { clientMutationId } }');
  const removed = (await mustGql(again.url, again.adminToken, 'mutation($g: String!) { removeGroup(groupId: $g) { group { displayName } } }', { g: groupId })).removeGroup.group;
  t.equal(removed.displayName, 'oncall');
  t.equal(await gusCount(again, 'other'), 'HTTP 404', 'the removed group grants nothing');
  t.equal(await countOf(again.url, 'other', again.adminToken), 5, 'the data is untouched');
});
