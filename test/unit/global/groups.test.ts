/**
 * Groups and roles in global state (GroupIndex through GlobalState.apply) and what they grant
 * (auth/permissions.ts): union with direct membership, ReadAccess required, the indexes kept when a
 * user, group, role, repository or view goes, and a snapshot round trip.
 */
import t from 'tap';
import { GlobalState, type GlobalEvent } from '../../../src/global/index.js';
import { principalHas, userHas, whoMay, type DomainRight } from '../../../src/auth/index.js';

function state(...events: GlobalEvent[]): GlobalState {
  const s = new GlobalState();
  const base: GlobalEvent[] = [
    { type: 'UserAdded', id: 'u1', username: 'ann', isRoot: false, at: 1 },
    { type: 'UserAdded', id: 'u2', username: 'bob', isRoot: false, at: 1 },
    { type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 },
    { type: 'RepositoryCreated', id: 'r2', name: 'db', description: '', at: 1 },
    { type: 'ViewSaved', id: 'v1', name: 'both', description: '', connections: [{ repositoryId: 'r1', filter: '' }], at: 1 },
    { type: 'GroupSaved', id: 'g1', displayName: 'ops', lookupName: null, at: 2 },
    { type: 'RoleSaved', role: { id: 'read', displayName: 'reader', color: null, description: null, viewPermissions: ['ReadAccess'], systemPermissions: [], organizationPermissions: [] }, at: 2 },
    { type: 'RoleSaved', role: { id: 'ret', displayName: 'keeper', color: null, description: null, viewPermissions: ['ReadAccess', 'ChangeRetention'], systemPermissions: [], organizationPermissions: [] }, at: 2 },
    { type: 'RoleSaved', role: { id: 'noread', displayName: 'blind', color: null, description: null, viewPermissions: ['ChangeUserAccess', 'DeleteEvents'], systemPermissions: [], organizationPermissions: [] }, at: 2 },
    { type: 'GroupUsersAdded', groupId: 'g1', userIds: ['u1'] },
  ];
  [...base, ...events].forEach((e, i) => s.apply(e, i + 1));
  return s;
}

const rights = (s: GlobalState, user: string, domain: 'r1' | 'r2' | 'v1'): DomainRight[] => {
  const d = domain === 'v1' ? s.views.get('v1')! : s.repositories.get(domain)!;
  return (['read', 'admin', 'retention', 'deleteEvents'] as const).filter((r) => userHas(s, user, d, r));
};

t.test('a role assigned to a group gives its users that role\'s rights on that domain only', async (t) => {
  const s = state({ type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'read', replace: true });
  t.strictSame(rights(s, 'u1', 'r1'), ['read']);
  t.strictSame(rights(s, 'u1', 'r2'), [], 'not another repository');
  t.strictSame(rights(s, 'u2', 'r1'), [], 'not a user outside the group');
  t.ok(principalHas(s, { kind: 'user', userId: 'u1', username: 'ann', isRoot: false }, s.repositories.get('r1')!, 'read'));
  t.notOk(principalHas(s, { kind: 'ingest', repositoryId: 'r2', tokenName: 'x' }, s.repositories.get('r1')!, 'read'));
});

t.test('replace swaps the group\'s roles on the domain; without it roles add up', async (t) => {
  const added = state(
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'read', replace: true },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'noread', replace: false },
  );
  t.strictSame(rights(added, 'u1', 'r1'), ['read', 'admin', 'deleteEvents'], 'the permissions of both roles, ReadAccess from one');
  const replaced = state(
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'read', replace: true },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'noread', replace: true },
  );
  t.strictSame(rights(replaced, 'u1', 'r1'), [], 'a role without ReadAccess gives nothing');
});

t.test('group rights add to direct membership', async (t) => {
  const s = state(
    { type: 'MemberSet', repositoryId: 'r1', userId: 'u1', canAdminMembers: true, canDeleteData: false },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'ret', replace: true },
  );
  t.strictSame(rights(s, 'u1', 'r1'), ['read', 'admin', 'retention']);
  const member = state({ type: 'MemberSet', repositoryId: 'r2', userId: 'u2', canAdminMembers: false, canDeleteData: true });
  t.strictSame(rights(member, 'u2', 'r2'), ['read', 'retention', 'deleteEvents'], 'deletion rights cover retention and deleting events');
});

t.test('what goes takes its grants along', async (t) => {
  const assign: GlobalEvent[] = [
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'read', replace: true },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'v1', roleId: 'read', replace: true },
  ];
  t.strictSame(rights(state(...assign), 'u1', 'v1'), ['read'], 'a view too');
  t.strictSame(rights(state(...assign, { type: 'GroupUsersRemoved', groupId: 'g1', userIds: ['u1'] }), 'u1', 'r1'), []);
  t.strictSame(rights(state(...assign, { type: 'GroupDeleted', id: 'g1' }), 'u1', 'r1'), []);
  t.strictSame(rights(state(...assign, { type: 'RoleDeleted', id: 'read' }), 'u1', 'r1'), []);
  t.strictSame(rights(state(...assign, { type: 'GroupRoleUnassigned', groupId: 'g1', domainId: 'r1', roleId: 'read' }), 'u1', 'r1'), []);
  t.strictSame(rights(state(...assign, { type: 'GroupRoleUnassigned', groupId: 'g1', domainId: 'r1', roleId: 'read' }), 'u1', 'v1'), ['read'], 'only that domain');
  const userGone = state(...assign, { type: 'UserRemoved', id: 'u1' });
  t.equal(userGone.groups.groups.get('g1')!.userIds.size, 0, 'a removed user leaves its groups');
  const repoGone = state(...assign, { type: 'RepositoryDeleted', id: 'r1' });
  t.strictSame(repoGone.groups.assignments('g1').map((a) => a.domainId), ['v1'], 'a deleted repository\'s assignments go');
  const viewGone = state(...assign, { type: 'ViewDeleted', id: 'v1' });
  t.strictSame(viewGone.groups.assignments('g1').map((a) => a.domainId), ['r1'], 'a deleted view\'s assignments go');
  const updated = state(...assign, { type: 'RoleSaved', role: { id: 'read', displayName: 'reader', color: null, description: null, viewPermissions: [], systemPermissions: [], organizationPermissions: [] }, at: 9 });
  t.strictSame(rights(updated, 'u1', 'r1'), [], 'a role changed in place changes what its groups give');
  t.equal(updated.groups.roles.get('read')!.createdAt, 2, 'and keeps its creation time');
});

t.test('a snapshot holds groups, roles and assignments', async (t) => {
  const s = state(
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'read', replace: true },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: 'ret', replace: false },
  );
  const back = GlobalState.fromSnapshot(JSON.parse(JSON.stringify(s.toSnapshot())));
  t.strictSame(back.groups.toSnapshot(), s.groups.toSnapshot());
  t.strictSame(rights(back, 'u1', 'r1'), ['read', 'retention']);
  t.equal(new GlobalState().toSnapshot().groups, undefined, 'absent when there are none');
});

t.test('each kind of change has its own permission; direct members change content, member admins administer', async (t) => {
  const all: DomainRight[] = ['read', 'admin', 'retention', 'deleteEvents', 'description', 'searchSettings', 'parsers', 'ingestTokens'];
  for (const kind of ['Triggers', 'Actions', 'Files', 'SavedQueries'] as const) for (const op of ['create', 'update', 'delete'] as const) all.push(`${op}:${kind}`);
  const rightsOf = (s: GlobalState, user: string): DomainRight[] => all.filter((r) => userHas(s, user, s.repositories.get('r1')!, r));
  const role = (id: string, perms: string[]): GlobalEvent[] => [
    { type: 'RoleSaved', role: { id, displayName: id, color: null, description: null, viewPermissions: ['ReadAccess', ...perms] as never, systemPermissions: [], organizationPermissions: [] }, at: 3 },
    { type: 'GroupRoleAssigned', groupId: 'g1', domainId: 'r1', roleId: id, replace: true },
  ];
  t.strictSame(rightsOf(state(...role('a', ['CreateTriggers', 'DeleteFiles', 'ChangeParsers'])), 'u1'), ['read', 'parsers', 'create:Triggers', 'delete:Files']);
  t.strictSame(rightsOf(state(...role('b', ['ChangeTriggersAndActions'])), 'u1'), ['read', 'create:Triggers', 'update:Triggers', 'delete:Triggers', 'create:Actions', 'update:Actions', 'delete:Actions']);
  t.strictSame(rightsOf(state(...role('c', ['ChangeSavedQueries', 'ChangeIngestTokens', 'ChangeViewOrRepositoryDescription', 'ChangeDefaultSearchSettings'])), 'u1'), ['read', 'description', 'searchSettings', 'ingestTokens', 'create:SavedQueries', 'update:SavedQueries', 'delete:SavedQueries']);
  const content = all.filter((r) => r.includes(':'));
  t.strictSame(rightsOf(state({ type: 'MemberSet', repositoryId: 'r1', userId: 'u2', canAdminMembers: false, canDeleteData: false }), 'u2'), ['read', ...content], 'a plain member reads and changes the content');
  t.strictSame(rightsOf(state({ type: 'MemberSet', repositoryId: 'r1', userId: 'u2', canAdminMembers: true, canDeleteData: false }), 'u2'), ['read', 'admin', 'description', 'searchSettings', 'parsers', 'ingestTokens', ...content], 'a member admin administers it');
  for (const r of all.slice(1) as Exclude<DomainRight, 'read'>[]) t.match(whoMay(r), /^root, .+, or a group role with ReadAccess and .+ there$/, `who may: ${r}`);
});
