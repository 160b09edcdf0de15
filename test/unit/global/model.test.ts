import t from 'tap';
import { GlobalState, type GlobalEvent } from '../../../src/global/index.js';
import { ALL_EVENTS, EXPECTED_FINAL, dump } from './fixtures.js';

function applyAll(events: GlobalEvent[], s = new GlobalState()): GlobalState {
  for (const e of events) s.apply(e, s.seq + 1);
  return s;
}

t.test('a new state is empty', async (t) => {
  const s = new GlobalState();
  t.strictSame(dump(s), {
    seq: 0,
    users: {},
    usersByName: {},
    usersByTokenDigest: {},
    repositories: {},
    repositoriesByName: {},
    ingestTokensByDigest: {},
    nodes: {},
    partitions: [],
  });
});

t.test('ALL_EVENTS covers every event type', async (t) => {
  const types = new Set(ALL_EVENTS.map((e) => e.type));
  t.strictSame([...types].sort(), [
    'DatasourceCreated',
    'IngestTokenAdded',
    'IngestTokenParserSet',
    'IngestTokenRemoved',
    'MemberRemoved',
    'MemberSet',
    'NodeRegistered',
    'PartitionLayoutSet',
    'RepositoryCreated',
    'RepositoryDeleted',
    'RepositoryDescriptionSet',
    'UserAdded',
    'UserApiTokenSet',
    'UserRemoved',
    'UserUpdated',
  ]);
});

t.test('applying every event type yields the expected model and indexes', async (t) => {
  const s = applyAll(ALL_EVENTS);
  t.strictSame(dump(s), EXPECTED_FINAL);
  t.equal(s.userByName('alice')?.id, 'u1');
  t.equal(s.userByName('carol'), undefined);
  t.equal(s.repositoryByName('web')?.id, 'r1');
  t.equal(s.repositoryByName('db'), undefined);
});

t.test('step by step', async (t) => {
  const s = new GlobalState();
  let next = 0;
  /** Applies the next event of ALL_EVENTS, which must be of the given type. */
  const step = (type: GlobalEvent['type']): void => {
    const e = ALL_EVENTS[next]!;
    t.equal(e.type, type, `event ${next + 1} is ${type}`);
    s.apply(e, ++next);
  };
  step('UserAdded');
  step('UserAdded');
  step('UserAdded');
  t.equal(s.seq, 3);
  t.strictSame(s.users.get('u3'), {
    id: 'u3',
    username: 'carol',
    isRoot: false,
    createdAt: 1_732_147_200_125,
    apiTokenDigest: null,
    company: 'Carol Co',
    picture: 'https://img/c.png',
  });
  t.strictSame(Object.fromEntries(s.usersByName), { alice: 'u1', bob: 'u2', carol: 'u3' });
  step('UserUpdated'); // u2 with isRoot
  t.equal(s.users.get('u2')!.isRoot, true);
  t.equal(s.users.get('u2')!.fullName, 'Bob Berg');
  step('UserUpdated'); // u1 without isRoot keeps isRoot
  t.equal(s.users.get('u1')!.isRoot, true);
  t.equal(s.users.get('u1')!.fullName, 'Alice Anders', 'fields not named are kept');
  t.equal(s.users.get('u1')!.email, 'alice@new.example.com');
  step('UserApiTokenSet');
  t.strictSame(Object.fromEntries(s.usersByTokenDigest), { 'digest-u1-old': 'u1' });
  step('UserApiTokenSet'); // replacing a token drops the old digest from the index
  t.strictSame(Object.fromEntries(s.usersByTokenDigest), { 'digest-u1-new': 'u1' });
  t.equal(s.users.get('u1')!.apiTokenDigest, 'digest-u1-new');
  step('UserApiTokenSet');
  t.strictSame(Object.fromEntries(s.usersByTokenDigest), { 'digest-u1-new': 'u1', 'digest-u3': 'u3' });
  step('RepositoryCreated');
  step('RepositoryCreated');
  t.strictSame(Object.fromEntries(s.repositoriesByName), { web: 'r1', db: 'r2' });
  t.equal(s.repositories.get('r2')!.description, '');
  step('RepositoryDescriptionSet');
  t.equal(s.repositories.get('r2')!.description, 'database logs');
  step('IngestTokenAdded');
  step('IngestTokenAdded');
  step('IngestTokenAdded');
  t.strictSame(Object.fromEntries(s.ingestTokensByDigest), {
    'it-r1-default': { repositoryId: 'r1', name: 'default' },
    'it-r1-second': { repositoryId: 'r1', name: 'second' },
    'it-r2-default': { repositoryId: 'r2', name: 'default' },
  });
  step('DatasourceCreated');
  step('DatasourceCreated');
  t.strictSame([...s.repositories.get('r1')!.datasources.keys()], ['ds-1']);
  t.strictSame(s.repositories.get('r2')!.datasources.get('ds-2'), { id: 'ds-2', tags: {}, createdAt: 1_732_147_200_139 });
  step('IngestTokenParserSet');
  t.equal(s.repositories.get('r1')!.ingestTokens.get('default')!.parser, 'kv');
  t.equal(s.repositories.get('r1')!.ingestTokens.get('second')!.parser, 'json');
  step('IngestTokenRemoved'); // gone from the repository and from the digest index
  t.strictSame([...s.repositories.get('r1')!.ingestTokens.keys()], ['default']);
  t.equal(s.ingestTokensByDigest.has('it-r1-second'), false);
  for (let i = 0; i < 4; i++) step('MemberSet');
  t.strictSame([...s.repositories.get('r1')!.members.keys()].sort(), ['u1', 'u2', 'u3']);
  t.strictSame([...s.repositories.get('r2')!.members.keys()], ['u3']);
  step('MemberRemoved');
  t.strictSame([...s.repositories.get('r1')!.members.keys()].sort(), ['u1', 'u3']);
  step('UserRemoved'); // u3: user, name index, token index and memberships everywhere
  t.equal(s.users.has('u3'), false);
  t.equal(s.usersByName.has('carol'), false);
  t.equal(s.usersByTokenDigest.has('digest-u3'), false);
  t.strictSame([...s.repositories.get('r1')!.members.keys()], ['u1']);
  t.strictSame([...s.repositories.get('r2')!.members.keys()], []);
  step('RepositoryDeleted'); // r2: repository, name index, its token digests
  t.equal(s.repositories.has('r2'), false);
  t.equal(s.repositoriesByName.has('db'), false);
  t.equal(s.ingestTokensByDigest.has('it-r2-default'), false);
  t.equal(s.ingestTokensByDigest.has('it-r1-default'), true, "another repository's tokens stay");
  step('NodeRegistered');
  step('NodeRegistered');
  t.strictSame([...s.nodes.keys()], [1, 2]);
  step('PartitionLayoutSet');
  t.strictSame(s.partitions, [[1, 2], [2, 1], [1], []]);
  t.equal(next, ALL_EVENTS.length, 'every event stepped through');
  t.strictSame(dump(s), EXPECTED_FINAL);
});

t.test('PartitionLayoutSet copies the layout (later mutation of the event does not leak in)', async (t) => {
  const s = new GlobalState();
  const e: GlobalEvent = { type: 'PartitionLayoutSet', partitions: [[1], [2]] };
  s.apply(e, 1);
  e.partitions[0]!.push(9);
  e.partitions.push([3]);
  t.strictSame(s.partitions, [[1], [2]]);
  s.apply({ type: 'PartitionLayoutSet', partitions: [[2, 1]] }, 2);
  t.strictSame(s.partitions, [[2, 1]], 'a new layout replaces the old one');
});

t.test('a user with an API token that is removed leaves no digest behind; a user without one is fine', async (t) => {
  const s = applyAll([
    { type: 'UserAdded', id: 'a', username: 'a', isRoot: false, at: 1 },
    { type: 'UserAdded', id: 'b', username: 'b', isRoot: false, at: 2 },
    { type: 'UserApiTokenSet', userId: 'a', digest: 'da', at: 3 },
    { type: 'UserRemoved', id: 'b' },
    { type: 'UserRemoved', id: 'a' },
  ]);
  t.equal(s.seq, 5);
  t.equal(s.users.size, 0);
  t.equal(s.usersByName.size, 0);
  t.equal(s.usersByTokenDigest.size, 0);
});

t.test('events naming missing things change nothing but seq', async (t) => {
  const base = applyAll(ALL_EVENTS);
  const before = dump(base);
  const noops: GlobalEvent[] = [
    { type: 'UserUpdated', id: 'nope', isRoot: true, fields: { fullName: 'x' } },
    { type: 'UserRemoved', id: 'u3' },
    { type: 'UserApiTokenSet', userId: 'nope', digest: 'dx', at: 1 },
    { type: 'RepositoryDescriptionSet', id: 'r2', description: 'x' },
    { type: 'RepositoryDeleted', id: 'r2' },
    { type: 'IngestTokenAdded', repositoryId: 'r2', name: 't', digest: 'dt', sealed: 's', parser: null, at: 1 },
    { type: 'IngestTokenRemoved', repositoryId: 'r1', name: 'nope' },
    { type: 'IngestTokenRemoved', repositoryId: 'nope', name: 'default' },
    { type: 'IngestTokenParserSet', repositoryId: 'r1', name: 'nope', parser: 'json' },
    { type: 'MemberSet', repositoryId: 'r1', userId: 'u3', canAdminMembers: true, canDeleteData: true },
    { type: 'MemberSet', repositoryId: 'r2', userId: 'u1', canAdminMembers: true, canDeleteData: true },
    { type: 'MemberRemoved', repositoryId: 'r2', userId: 'u1' },
    { type: 'MemberRemoved', repositoryId: 'r1', userId: 'u2' },
    { type: 'DatasourceCreated', repositoryId: 'r2', id: 'ds-x', tags: { a: 'b' }, at: 1 },
  ];
  for (const [i, e] of noops.entries()) {
    base.apply(e, before.seq + i + 1);
    t.strictSame(dump(base), { ...before, seq: before.seq + i + 1 }, `${e.type} on something missing`);
  }
});

t.test('an unknown event type throws', async (t) => {
  const s = new GlobalState();
  t.throws(() => s.apply({ type: 'Bogus' } as unknown as GlobalEvent, 1), { message: /unknown global event \{"type":"Bogus"\}/ });
});

t.test('fromSnapshot(toSnapshot()) reproduces the state, indexes included', async (t) => {
  for (let n = 0; n <= ALL_EVENTS.length; n++) {
    const s = applyAll(ALL_EVENTS.slice(0, n));
    const copy = GlobalState.fromSnapshot(s.toSnapshot());
    t.strictSame(dump(copy), dump(s), `after ${n} events`);
    t.strictSame(copy.toSnapshot(), s.toSnapshot(), `snapshot after ${n} events`);
  }
});

t.test('toSnapshot is plain data with the documented shape', async (t) => {
  const snap = applyAll(ALL_EVENTS).toSnapshot();
  t.strictSame(snap, {
    seq: EXPECTED_FINAL.seq,
    decisions: 0,
    cluster: { clusterId: null, partitions: [], ended: [], holdings: [], epochEnds: [], segments: { segments: [] } },
    users: Object.values(EXPECTED_FINAL.users),
    repositories: [
      {
        id: 'r1',
        name: 'web',
        description: 'web server logs',
        createdAt: EXPECTED_FINAL.repositories.r1.createdAt,
        ingestTokens: Object.values(EXPECTED_FINAL.repositories.r1.ingestTokens),
        members: Object.values(EXPECTED_FINAL.repositories.r1.members),
        datasources: Object.values(EXPECTED_FINAL.repositories.r1.datasources),
        retention: { timeDays: null, ingestGb: null, storageGb: null },
        automaticSearch: true,
      },
    ],
    nodes: Object.values(EXPECTED_FINAL.nodes),
    partitions: EXPECTED_FINAL.partitions,
    // Lookup files and custom parsers (their events: test/unit/parsers/custom-parser.test.ts).
    files: [],
    parsers: [],
    alerting: { alerts: [], actions: [], runtime: [] },
    // Ingest listeners (their events: the test below).
    listeners: [],
    views: [],
    savedQueries: [],
  });
});

t.test('ingest listeners: saved, replaced, snapshotted, dropped with their repository', async (t) => {
  const s = applyAll(ALL_EVENTS);
  const l = { id: 'l1', name: 'syslog', repositoryId: 'r1', protocol: 'TCP' as const, bindInterface: '127.0.0.1', port: 5514, parser: 'syslog', charset: 'utf-8', vHost: null, createdAt: 5 };
  s.apply({ type: 'IngestListenerSaved', listener: l }, 200);
  s.apply({ type: 'IngestListenerSaved', listener: { ...l, port: 5515 } }, 201);
  t.same(s.listeners.forRepository('r1').map((x) => x.port), [5515], 'a save replaces');
  const copy = GlobalState.fromSnapshot(s.toSnapshot());
  t.strictSame(copy.listeners.all(), s.listeners.all(), 'kept by snapshots');
  const { listeners: _dropped, ...older } = s.toSnapshot();
  t.strictSame(GlobalState.fromSnapshot(older).listeners.all(), [], 'older snapshots have none');
  copy.apply({ type: 'IngestListenerDeleted', id: 'l1' }, 202);
  t.equal(copy.listeners.all().length, 0);
  s.apply({ type: 'RepositoryDeleted', id: 'r1' }, 203);
  t.equal(s.listeners.all().length, 0, 'dropped with the repository');
});

t.test('retention, automatic searching and views apply and survive a snapshot', async (t) => {
  const s = applyAll(ALL_EVENTS);
  let seq = 1000;
  s.apply({ type: 'RepositoryRetentionSet', id: 'r1', retention: { timeDays: 7, ingestGb: null, storageGb: 2.5 } }, ++seq);
  s.apply({ type: 'RepositoryAutomaticSearchSet', id: 'r1', automaticSearch: false }, ++seq);
  s.apply({ type: 'ViewSaved', id: 'v1', name: 'ops', description: 'd', connections: [{ repositoryId: 'r1', filter: 'status=500' }], at: 5 }, ++seq);
  s.apply({ type: 'ViewMemberSet', viewId: 'v1', userId: 'u1', canAdminMembers: true, canDeleteData: false }, ++seq);
  const copy = GlobalState.fromSnapshot(s.toSnapshot());
  for (const g of [s, copy]) {
    t.strictSame(g.repositories.get('r1')!.retention, { timeDays: 7, ingestGb: null, storageGb: 2.5 });
    t.equal(g.repositories.get('r1')!.automaticSearch, false);
    t.strictSame(g.views.byName('ops')!.connections, [{ repositoryId: 'r1', filter: 'status=500' }]);
    t.ok(g.views.byName('ops')!.members.get('u1')?.canAdminMembers);
  }
  copy.apply({ type: 'RepositoryDeleted', id: 'r1' }, ++seq);
  t.strictSame(copy.views.byName('ops')!.connections, [], 'a deleted repository leaves the view');
  copy.apply({ type: 'ViewDeleted', id: 'v1' }, ++seq);
  t.equal(copy.views.byName('ops'), undefined);
  t.ok(s.views.byName('ops'), 'the source is unchanged');
});

t.test('a state rebuilt from a snapshot is independent of the source', async (t) => {
  const s = applyAll(ALL_EVENTS);
  const snap = s.toSnapshot();
  const copy = GlobalState.fromSnapshot(snap);
  copy.apply({ type: 'UserUpdated', id: 'u1', fields: { fullName: 'Changed' } }, 100);
  copy.apply({ type: 'IngestTokenParserSet', repositoryId: 'r1', name: 'default', parser: null }, 101);
  copy.apply({ type: 'MemberSet', repositoryId: 'r1', userId: 'u1', canAdminMembers: false, canDeleteData: false }, 102);
  copy.partitions[0]!.push(7);
  t.strictSame(dump(s), EXPECTED_FINAL, 'the source state is unchanged');
  t.equal(snap.users[0]!.fullName, 'Alice Anders', 'the snapshot data is unchanged');
  t.strictSame(snap.partitions, EXPECTED_FINAL.partitions);
});

t.test('a snapshot written before datasources were tracked loads with no datasources', async (t) => {
  const snap = applyAll(ALL_EVENTS).toSnapshot();
  const old = { ...snap, repositories: snap.repositories.map(({ datasources: _d, ...r }) => r) };
  const g = GlobalState.fromSnapshot(old);
  t.strictSame([...g.repositories.get('r1')!.datasources.keys()], []);
  const expected = dump(applyAll(ALL_EVENTS));
  expected.repositories.r1.datasources = {} as typeof expected.repositories.r1.datasources;
  t.strictSame(dump(g), expected);
});
