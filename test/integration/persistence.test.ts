/**
 * Global state survives restarts of a real node: a clean SIGTERM, a SIGKILL in the middle of a burst
 * of concurrent mutations (acknowledged = durable), a torn tail of the global log, frequent snapshots.
 * Also: the data-dir lock refuses a second node, and the node uuid is stable.
 */
import t from 'tap';
import { appendFile, readdir, readFile, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';

/** Every piece of global state the GraphQL API shows, in one query (the node's URI changes with its port, so it is left out). */
const DUMP = `{
  users { id username displayName fullName email company countryCode picture isRoot createdAt }
  repositories {
    id name description type automaticSearch createdAt
    ingestTokens { name token parser { id name isBuiltIn } }
    members { user { id username fullName } hasMembershipAdminRights hasDeletionRights }
  }
  cluster { nodes { id name uuid humioVersion } ingestPartitions { id nodeIds } }
}`;

async function dump(node: TestNode): Promise<any> {
  const r = await gql(node.url, node.adminToken, DUMP);
  if (r.status !== 200 || r.errors !== undefined) throw new Error(`dump failed: ${r.status} ${JSON.stringify(r.errors)}`);
  return r.data;
}

/** Runs a mutation (as the local admin unless a token is given); throws on any error. */
async function mutate(node: TestNode, query: string, variables?: Record<string, unknown>, token = node.adminToken): Promise<any> {
  const r = await gql(node.url, token, query, variables);
  if (r.status !== 200 || r.errors !== undefined) throw new Error(`mutation failed: ${r.status} ${JSON.stringify(r.errors)}\n${query}`);
  return r.data;
}

const ADD_USER = 'mutation($u: String!, $f: String, $e: String, $r: Boolean) { addUser(input: {username: $u, fullName: $f, email: $e, isRoot: $r}) { user { id } } }';
const ROTATE = 'mutation($id: String!) { rotateUserApiTokenAndGet(input: {id: $id}) }';
const CREATE_REPO = 'mutation($n: String!, $d: String) { createRepository(name: $n, description: $d) { repository { id } } }';
const ADD_TOKEN = 'mutation($r: String!, $n: String!, $p: String) { addIngestTokenV3(input: {repositoryName: $r, name: $n, parser: $p}) { name token parser { name } } }';
const ASSIGN = 'mutation($r: String!, $n: String!, $p: String!) { assignParserToIngestTokenV2(input: {repositoryName: $r, tokenName: $n, parser: $p}) { name } }';
const ADD_MEMBER = 'mutation($r: String!, $u: String!, $a: Boolean, $d: Boolean) { addMember(searchDomainName: $r, username: $u, hasMembershipAdminRights: $a, hasDeletionRights: $d) { clientMutationId } }';

const layoutOf = (count: number): { partition: number; hosts: number[] }[] => Array.from({ length: count }, (_, i) => ({ partition: i, hosts: [1] }));

async function whoAmI(node: TestNode, token: string): Promise<{ status: number; username?: string }> {
  // Not gql(): an authentication failure is a text/plain 401, not a GraphQL document.
  const r = await api(node.url, '/graphql', { token, body: JSON.stringify({ query: '{ viewer { username } }' }) });
  return { status: r.status, username: r.status === 200 ? r.json().data?.viewer?.username : undefined };
}

async function uuidFile(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'cluster_membership.uuid'), 'utf8')).trim();
}

async function globalFiles(dataDir: string): Promise<string[]> {
  return (await readdir(join(dataDir, 'global'))).sort();
}

async function newestLog(dataDir: string): Promise<string> {
  const logs = (await globalFiles(dataDir)).filter((n) => /^events-\d+\.log$/.test(n));
  if (logs.length === 0) throw new Error('no global log file');
  return join(dataDir, 'global', logs.at(-1)!);
}

/** A varied set of state: users with details, rotated tokens, repositories, ingest tokens with parsers, members, removals, a 30-partition layout. */
async function populate(node: TestNode): Promise<{ alice: { id: string; token: string; oldToken: string }; ingest: Record<string, string> }> {
  const aliceAdd = await mutate(node, ADD_USER, { u: 'alice', f: 'Alice Liddell', e: 'alice@example.com' });
  const aliceId = aliceAdd.addUser.user.id as string;
  const oldToken = (await mutate(node, ROTATE, { id: aliceId })).rotateUserApiTokenAndGet as string;
  // Alice rotates her own token: the first one stops working.
  const aliceToken = (await mutate(node, ROTATE, { id: aliceId }, oldToken)).rotateUserApiTokenAndGet as string;
  await mutate(node, ADD_USER, { u: 'bob', f: 'Bob Builder', r: true });
  await mutate(node, ADD_USER, { u: 'carol' });
  await mutate(node, ADD_USER, { u: 'doomed', f: 'Removed Later' });
  await mutate(node, 'mutation { removeUser(input: {username: "doomed"}) { user { id } } }');
  await mutate(node, 'mutation { updateUser(input: {username: "carol", fullName: "Carol Updated", company: "ACME", countryCode: "DK"}) { user { id } } }');

  await mutate(node, CREATE_REPO, { n: 'web-logs', d: 'front-end access logs' });
  await mutate(node, CREATE_REPO, { n: 'app.logs', d: '' });
  await mutate(node, CREATE_REPO, { n: 'gone' });
  await mutate(node, 'mutation { deleteSearchDomain(name: "gone") { result } }');
  await mutate(node, 'mutation { updateDescriptionForSearchDomain(name: "app.logs", newDescription: "application logs") { result } }');

  const ingest: Record<string, string> = {};
  for (const [repo, name, parser] of [
    ['web-logs', 'nginx', 'accesslog'],
    ['web-logs', 'raw', null],
    ['app.logs', 'json-in', 'json'],
    ['app.logs', 'to-remove', 'kv'],
  ] as const) {
    const tok = await mutate(node, ADD_TOKEN, { r: repo, n: name, p: parser });
    ingest[`${repo}/${name}`] = tok.addIngestTokenV3.token as string;
  }
  await mutate(node, ASSIGN, { r: 'web-logs', n: 'default', p: 'syslog' });
  await mutate(node, 'mutation { removeIngestToken(repositoryName: "app.logs", name: "to-remove") { result } }');

  await mutate(node, ADD_MEMBER, { r: 'web-logs', u: 'alice', a: true, d: false });
  await mutate(node, ADD_MEMBER, { r: 'web-logs', u: 'carol', a: false, d: true });
  await mutate(node, ADD_MEMBER, { r: 'app.logs', u: 'carol' });
  await mutate(node, 'mutation { removeMember(searchDomainName: "app.logs", username: "carol") { clientMutationId } }');

  const lay = await api(node.url, '/api/v1/clusterconfig/ingestpartitions', { token: node.adminToken, body: JSON.stringify(layoutOf(30)) });
  if (lay.status !== 200) throw new Error(`layout: ${lay.status} ${lay.text}`);
  return { alice: { id: aliceId, token: aliceToken, oldToken }, ingest };
}

t.test('a clean SIGTERM restart restores everything exactly', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir });
  const { alice, ingest } = await populate(node);
  const before = await dump(node);

  // Sanity of what was written, so that "equal after restart" means something.
  t.same(
    before.users.map((u: any) => u.username),
    ['admin', 'alice', 'bob', 'carol'],
    'users as created (doomed removed)',
  );
  t.equal(before.users.find((u: any) => u.username === 'alice').fullName, 'Alice Liddell');
  t.same(
    before.repositories.map((r: any) => r.name),
    ['app.logs', 'web-logs'],
  );
  const web = before.repositories.find((r: any) => r.name === 'web-logs');
  t.same(
    web.ingestTokens.map((x: any) => [x.name, x.parser?.name ?? null]),
    [
      ['default', 'syslog'],
      ['nginx', 'accesslog'],
      ['raw', null],
    ],
  );
  t.equal(before.cluster.ingestPartitions.length, 30);
  t.equal((await whoAmI(node, alice.token)).username, 'alice');
  t.equal((await whoAmI(node, alice.oldToken)).status, 401, 'a rotated-away token no longer works');
  const uuid = await uuidFile(dataDir);
  t.match(uuid, /^[0-9a-f-]{36}$/);
  t.equal(before.cluster.nodes[0].uuid, uuid, 'GraphQL cluster.nodes uuid is the cluster_membership.uuid file');

  t.equal(await node.stop(), 0, 'SIGTERM: exit code 0');
  t.notOk(await stat(join(dataDir, 'logsvc.lock')).catch(() => null), 'a clean stop removes the lock file');

  const again = await startNode(t, { dataDir });
  t.not(again.adminToken, node.adminToken, 'a new local admin token at every start');
  t.equal((await whoAmI(again, node.adminToken)).status, 401, 'the previous local admin token stops working');
  const after = await dump(again);
  t.same(after, before, 'the full GraphQL state is identical after the restart');
  t.strictSame(after, before);
  t.equal((await whoAmI(again, alice.token)).username, 'alice', "alice's API token still works");
  t.equal((await whoAmI(again, alice.oldToken)).status, 401, 'the rotated-away token still does not');
  const tokensAfter: Record<string, string> = {};
  for (const r of after.repositories) for (const x of r.ingestTokens) tokensAfter[`${r.name}/${x.name}`] = x.token;
  for (const [k, v] of Object.entries(ingest)) {
    if (k === 'app.logs/to-remove') t.notOk(k in tokensAfter, 'the removed ingest token stays removed');
    else t.equal(tokensAfter[k], v, `ingest token ${k} keeps its value`);
  }
  const rest = await api(again.url, '/api/v1/clusterconfig/ingestpartitions', { token: again.adminToken });
  t.same(rest.json(), layoutOf(30), 'the 30-partition layout survives (REST)');
  t.equal(await uuidFile(dataDir), uuid, 'the uuid file is unchanged');
  t.equal(after.cluster.nodes.length, 1, 'a restart does not register a second node');

  // And the restored node keeps working.
  await mutate(again, ADD_USER, { u: 'dave' });
  t.equal(await again.stop(), 0);
});

t.test('SIGKILL in the middle of a burst of concurrent mutations: every acknowledged mutation is durable', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir });
  const uuid = await uuidFile(dataDir);
  const ackedUsers: string[] = [];
  const ackedRepos: string[] = [];
  const ackedTokens = new Map<string, string>();
  await mutate(node, CREATE_REPO, { n: 'base' });
  let stop = false;
  let failures = 0;

  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const kind = (w + i) % 3;
      const name = `w${w}-${i}`;
      try {
        if (kind === 0) {
          const r = await gql(node.url, node.adminToken, ADD_USER, { u: `user-${name}`, f: `Full ${name}` });
          if (r.status === 200 && r.errors === undefined) ackedUsers.push(`user-${name}`);
        } else if (kind === 1) {
          const r = await gql(node.url, node.adminToken, CREATE_REPO, { n: `repo-${name}`, d: `d ${name}` });
          if (r.status === 200 && r.errors === undefined) ackedRepos.push(`repo-${name}`);
        } else {
          const r = await gql(node.url, node.adminToken, ADD_TOKEN, { r: 'base', n: `tok-${name}`, p: 'kv' });
          if (r.status === 200 && r.errors === undefined) ackedTokens.set(`tok-${name}`, r.data.addIngestTokenV3.token);
        }
      } catch {
        failures++; // the connection died with the node: not acknowledged
        if (stop) return;
      }
    }
  };
  const workers = Array.from({ length: 12 }, (_, w) => worker(w));
  // Kill once the burst is well under way (bounded: at most 30 s even on a slow disk).
  const deadline = Date.now() + 30_000;
  while (ackedUsers.length + ackedRepos.length + ackedTokens.size < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await node.kill();
  stop = true;
  await Promise.all(workers);
  const acked = ackedUsers.length + ackedRepos.length + ackedTokens.size;
  t.ok(acked >= 20, `mutations acknowledged before the kill: ${acked} (users ${ackedUsers.length}, repos ${ackedRepos.length}, tokens ${ackedTokens.size}); failed in flight: ${failures}`);

  const again = await startNode(t, { dataDir });
  t.equal((await api(again.url, '/api/v1/status')).status, 200, 'the node starts cleanly after SIGKILL (stale lock taken over)');
  t.notMatch(again.stderr(), /E_STATE_CORRUPT/);
  const after = await dump(again);
  const users = new Map<string, any>(after.users.map((u: any) => [u.username, u]));
  const repos = new Map<string, any>(after.repositories.map((r: any) => [r.name, r]));
  const missingUsers = ackedUsers.filter((u) => users.get(u)?.fullName !== `Full ${u.slice(5)}`);
  const missingRepos = ackedRepos.filter((r) => !repos.has(r));
  t.same(missingUsers, [], `all ${ackedUsers.length} acknowledged users are present with their fullName`);
  t.same(missingRepos, [], `all ${ackedRepos.length} acknowledged repositories are present`);
  const base = new Map<string, string>(repos.get('base').ingestTokens.map((x: any) => [x.name, x.token]));
  const missingTokens = [...ackedTokens].filter(([n, v]) => base.get(n) !== v).map(([n]) => n);
  t.same(missingTokens, [], `all ${ackedTokens.size} acknowledged ingest tokens are present with their values`);

  // A transaction is all or nothing: createRepository writes the repository and its "default"
  // ingest token together, so no repository may come back without it (acknowledged or not).
  const withoutDefault = after.repositories.filter((r: any) => !r.ingestTokens.some((x: any) => x.name === 'default')).map((r: any) => r.name);
  t.same(withoutDefault, [], 'every restored repository has its "default" ingest token (no half-applied createRepository)');

  t.equal(after.cluster.nodes[0].uuid, uuid, 'the node uuid is stable across a SIGKILL restart');
  t.equal(await uuidFile(dataDir), uuid);
  // The restored node accepts new mutations, and a further restart is clean.
  await mutate(again, ADD_USER, { u: 'after-kill' });
  const final = await dump(again);
  t.equal(await again.stop(), 0);
  const third = await startNode(t, { dataDir });
  t.same(await dump(third), final, 'a further clean restart restores the same state');
  t.notMatch(third.stderr(), /repaired/, 'no repair needed after a clean stop');
  t.equal(await third.stop(), 0);
});

t.test('SIGKILL never leaves a half-applied multi-event transaction', async (t) => {
  // createRepository is one transaction of two events (RepositoryCreated + the "default"
  // IngestTokenAdded). Killing the node while such transactions are being written must never bring
  // back a repository without its default token. The kill lands at a random point of the write
  // path, so a few rounds are run (stopping at the first half-applied transaction).
  const dataDir = await tempDir(t);
  let node = await startNode(t, { dataDir });
  const halfApplied: string[] = [];
  let rounds = 0;
  let acked = 0;
  const ackedNames: string[] = [];
  for (let round = 0; round < 6 && halfApplied.length === 0; round++) {
    rounds++;
    let stop = false;
    const current = node;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await gql(current.url, current.adminToken, CREATE_REPO, { n: `r${round}-w${w}-${i}` });
          if (r.status === 200 && r.errors === undefined) {
            acked++;
            ackedNames.push(`r${round}-w${w}-${i}`);
          }
        } catch {
          return; // the node is gone
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    // Let the burst get going (a few acknowledged, bounded), then kill at a varying moment.
    const ackedBefore = acked;
    const deadline = Date.now() + 10_000;
    while (acked - ackedBefore < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20 + round * 37));
    await current.kill();
    stop = true;
    await Promise.all(workers);
    node = await startNode(t, { dataDir });
    const repos = (await dump(node)).repositories as any[];
    halfApplied.push(...repos.filter((r) => !r.ingestTokens.some((x: any) => x.name === 'default')).map((r) => r.name as string));
    const names = new Set(repos.map((r) => r.name as string));
    const lost = ackedNames.filter((n) => !names.has(n));
    t.same(lost, [], `round ${round}: every acknowledged createRepository is present`);
  }
  t.ok(acked > 0, `${acked} repositories acknowledged over ${rounds} kill rounds`);
  t.same(halfApplied, [], 'no repository came back without its "default" ingest token (transactions are all or nothing)');
  t.equal(await node.stop(), 0);
});

t.test('a torn global log tail is cut off on start; everything before it is kept', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir });
  await populate(node);
  const before = await dump(node);
  t.equal(await node.stop(), 0);

  // 1. Garbage appended after the last complete record (a crash mid-append of a new record).
  const log = await newestLog(dataDir);
  const sizeBefore = (await stat(log)).size;
  await appendFile(log, Buffer.from('GARBAGE-TAIL'));
  const second = await startNode(t, { dataDir });
  t.same(await dump(second), before, 'everything before the garbage is restored');
  t.match(second.stderr(), /global state repaired on open/, 'the repair is logged on stderr');
  t.match(second.stderr(), /moved 12 damaged bytes/, 'the log line says how many bytes were cut');
  const aside = (await globalFiles(dataDir)).filter((n) => n.includes('.damaged-'));
  t.equal(aside.length, 1, `the damaged bytes are kept aside (${aside.join(', ')})`);
  t.equal((await readFile(join(dataDir, 'global', aside[0]!))).toString(), 'GARBAGE-TAIL');
  t.equal((await stat(log)).size >= sizeBefore, true, 'the log was cut back to (at least) its good length');

  // 2. A record cut in the middle (truncated mid-append): the node starts, that record is dropped.
  await mutate(second, ADD_USER, { u: 'kept-user', f: 'Kept' });
  await mutate(second, ADD_USER, { u: 'torn-user', f: 'Torn' });
  const beforeTear = await dump(second);
  t.equal(await second.stop(), 0);
  const log2 = await newestLog(dataDir);
  const size2 = (await stat(log2)).size;
  await truncate(log2, size2 - 5);
  const third = await startNode(t, { dataDir });
  t.match(third.stderr(), /global state repaired on open.*truncated-payload/, 'the cut record is reported on stderr');
  const afterTear = await dump(third);
  t.notOk(
    afterTear.users.some((u: any) => u.username === 'torn-user'),
    'the torn last record (torn-user) is dropped',
  );
  t.same(
    afterTear,
    { ...beforeTear, users: beforeTear.users.filter((u: any) => u.username !== 'torn-user') },
    'everything before the torn record is restored exactly',
  );

  // 3. After the repair the log is usable: new mutations land, and the next start needs no repair.
  await mutate(third, ADD_USER, { u: 'torn-user', f: 'Again' });
  const final = await dump(third);
  t.equal(await third.stop(), 0);
  const fourth = await startNode(t, { dataDir });
  t.notMatch(fourth.stderr(), /repaired/, 'no repair needed after the repaired log was appended to');
  t.same(await dump(fourth), final, 'state after the repair + new mutations is restored');
  t.equal(await fourth.stop(), 0);
});

t.test('frequent snapshots ([state] snapshot_every_events = 5): restart restores everything from snapshot + log', async (t) => {
  const dataDir = await tempDir(t);
  const config = '[state]\nsnapshot_every_events = 5\n';
  const node = await startNode(t, { dataDir, config });
  const { alice, ingest } = await populate(node);
  for (let i = 0; i < 23; i++) await mutate(node, ADD_USER, { u: `bulk-${i}`, f: `Bulk ${i}`, e: `b${i}@example.com` });
  for (let i = 0; i < 4; i++) await mutate(node, CREATE_REPO, { n: `snap-repo-${i}`, d: `repo ${i}` });
  await mutate(node, ADD_MEMBER, { r: 'snap-repo-0', u: 'bulk-3', a: true, d: true });
  const before = await dump(node);
  t.equal(before.users.length, 4 + 23);

  const files = await globalFiles(dataDir);
  const snaps = files.filter((n) => /^snapshot-\d+\.bin$/.test(n));
  t.ok(snaps.length >= 1 && snaps.length <= 2, `one or two snapshots are kept (${snaps.join(', ')})`);
  t.ok(files.filter((n) => /^events-\d+\.log$/.test(n)).length <= 3, `old logs are pruned (${files.join(', ')})`);

  t.equal(await node.stop(), 0);
  const again = await startNode(t, { dataDir, config });
  t.same(await dump(again), before, 'everything is restored after a clean stop');
  t.equal((await whoAmI(again, alice.token)).username, 'alice', "alice's token works (token digests in the snapshot)");
  t.equal((await whoAmI(again, alice.oldToken)).status, 401);
  const restored = await dump(again);
  for (const [k, v] of Object.entries(ingest)) {
    const [repo, name] = k.split('/') as [string, string];
    const tok = restored.repositories.find((r: any) => r.name === repo)?.ingestTokens.find((x: any) => x.name === name);
    if (name === 'to-remove') t.notOk(tok);
    else t.equal(tok?.token, v, `ingest token ${k} keeps its value through snapshots`);
  }

  // More mutations, then SIGKILL: snapshot + log still restore everything.
  for (let i = 0; i < 7; i++) await mutate(again, ADD_USER, { u: `late-${i}` });
  await mutate(again, ADD_TOKEN, { r: 'snap-repo-1', n: 'late-token', p: 'none' });
  const beforeKill = await dump(again);
  await again.kill();
  const third = await startNode(t, { dataDir, config });
  t.same(await dump(third), beforeKill, 'everything is restored after SIGKILL with snapshots');
  t.equal(await third.stop(), 0);
});

t.test('a second node on a data dir in use fails to start; the first keeps serving', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir });
  await mutate(node, ADD_USER, { u: 'first' });
  const second = await runCli(['node', '--port', '0', '--data-dir', dataDir], 60_000);
  t.not(second.code, 0, `the second node exits non-zero (code ${second.code})`);
  t.not(second.code, null, 'it exits by itself (not killed by the timeout)');
  t.notMatch(second.stdout, /ready at/, 'it never reports ready');
  t.match(second.stderr, /lock|LOCKED/i, 'the message names the lock');
  t.match(second.stderr, new RegExp(`in use by another logsvc process \\(pid ${node.proc.pid}\\)`), 'and the pid holding it');
  t.equal((await readFile(join(dataDir, 'local-admin-token.txt'), 'utf8')).trim(), node.adminToken, 'the refused node did not replace the admin token file');
  t.equal((await readFile(join(dataDir, 'logsvc.lock'), 'utf8')).trim(), String(node.proc.pid), 'the lock still names the first node');

  t.equal((await api(node.url, '/api/v1/status')).status, 200, 'the first node keeps serving');
  await mutate(node, ADD_USER, { u: 'second' });
  t.same(
    (await dump(node)).users.map((u: any) => u.username),
    ['admin', 'first', 'second'],
    'the first node keeps writing',
  );
  t.equal(await node.stop(), 0);
});
