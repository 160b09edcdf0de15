/**
 * Lookup files end to end on a real node: upload (repository and shared, both path spellings),
 * download, listing and removal through GraphQL, atomic replacement, and refusal of malicious
 * uploads (traversal names, oversize files, too many parts, non-root shared uploads); then
 * match() and lookup() in every mode against the uploaded CSV and JSON variants.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser } from '../helpers/http.js';
import { createRepo, addMember, ingestStructured, mustGql, queryJson, postQuery, waitForCount, type KnownEvent } from '../helpers/query.js';
import { multipartBody, postMultipart, uploadFile } from '../helpers/files.js';

const USERS_CSV = 'userid,name,role\n1,Ada Lovelace,admin\n2,"Turing, Alan",dev\n3, spaced ,ops\n2,Second Two,dup\n';
const HOSTS_JSON_KEYED = JSON.stringify({ web1: { dc: 'east', tier: 'front' }, DB1: { dc: 'west', tier: 'data', port: 5432 } });
const HOSTS_JSON_ARRAY = JSON.stringify([{ host: 'web1', owner: 'team-a' }, { host: 'db1', owner: 'team-b' }]);
const NETS_CSV = 'subnet,zone\n10.0.0.0/8,internal\n10.1.0.0/16,lab\n192.168.1.7,printer\n2001:db8::/32,v6net\n';
const GLOBS_CSV = 'pattern,kind\n*/login*,auth\n/static/*,asset\n*.php,legacy\n';

t.test('lookup files and match()/lookup()', async (t) => {
  t.setTimeout(120_000);
  const node = await startNode(t, { config: '[files]\nmax_file_bytes = 200000\nmax_rows = 1000\n' });
  const base = node.url;
  const admin = node.adminToken;
  const repo = await createRepo(base, admin, 'files1');
  const other = await createRepo(base, admin, 'files2');
  const member = await createUser(base, admin, 'fmember');
  await addMember(base, admin, 'files1', 'fmember');

  await t.test('upload, download and list', async (t) => {
    const up = await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'users.csv', USERS_CSV);
    t.equal(up.status, 200, up.text);
    t.equal(up.json().rows, 4);
    t.equal((await uploadFile(base, '/api/v1/dataspaces/files1/files', member.token, 'hosts.json', HOSTS_JSON_KEYED)).status, 200);
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'owners.json', HOSTS_JSON_ARRAY)).status, 200);
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'nets.csv', NETS_CSV)).status, 200);
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'globs.csv', GLOBS_CSV)).status, 200);
    const got = await api(base, '/api/v1/dataspaces/files1/files/users.csv', { token: member.token });
    t.equal(got.status, 200);
    t.equal(got.text, USERS_CSV, 'the file comes back byte for byte');
    const list = await mustGql(base, member.token, '{ searchDomain(name: "files1") { __typename files { contentHash nameAndPath { name path } } } }');
    t.strictSame(list.searchDomain.files.map((f: any) => f.nameAndPath.name).sort(), ['globs.csv', 'hosts.json', 'nets.csv', 'owners.json', 'users.csv']);
    t.match(list.searchDomain.files[0].contentHash, /^[0-9a-f]{64}$/);
    const outsider = await createUser(base, admin, 'foutsider');
    t.equal((await api(base, '/api/v1/repositories/files1/files/users.csv', { token: outsider.token })).status, 404, 'non-members cannot read');
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', outsider.token, 'x.csv', 'a\n1\n')).status, 404, 'nor upload');
  });

  await t.test('bad and malicious uploads are refused', async (t) => {
    for (const name of ['../evil.csv', '..\\evil.csv', '/etc/passwd.csv', 'a/b.csv', '..', 'notes.txt']) {
      const r = await postMultipart(base, '/api/v1/repositories/files1/files', admin, multipartBody([{ name: 'file', fileName: name, content: 'a,b\n1,2\n' }]));
      t.equal(r.status, 400, `${name}: ${r.text}`);
      t.match(r.text, /file name/);
    }
    const traversalGet = await api(base, '/api/v1/repositories/files1/files/..%2F..%2Fstate.key', { token: admin });
    t.equal(traversalGet.status, 400, traversalGet.text);
    const big = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'big.csv', `a\n${'x'.repeat(210_000)}\n`);
    t.equal(big.status, 413, big.text);
    const manyParts = multipartBody(Array.from({ length: 3000 }, (_, i) => ({ name: `f${i}`, content: 'x' })));
    const many = await postMultipart(base, '/api/v1/repositories/files1/files', admin, manyParts);
    t.equal(many.status, 400, many.text);
    t.match(many.text, /parts/);
    const wrongPart = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'x.csv', 'a\n1\n', 'upload');
    t.equal(wrongPart.status, 400);
    t.match(wrongPart.text, /"file"/);
    const tooManyRows = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'rows.csv', `a\n${'1\n'.repeat(1001)}`);
    t.equal(tooManyRows.status, 400);
    t.match(tooManyRows.text, /files\.max_rows/);
    const ragged = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'ragged.csv', 'a,b\n1\n');
    t.equal(ragged.status, 400);
    t.match(ragged.text, /CSV/);
    const nested = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'nested.json', '[{"a":{"b":1}}]');
    t.equal(nested.status, 400);
    t.match(nested.text, /nested/);
    const notMultipart = await api(base, '/api/v1/repositories/files1/files', { token: admin, body: 'a,b' });
    t.equal(notMultipart.status, 415);
  });

  await t.test('shared files: root only, visible from every repository', async (t) => {
    const refused = await uploadFile(base, '/api/v1/uploadedfiles/shared', member.token, 'shared.csv', 'userid,team\n1,core\n');
    t.equal(refused.status, 403, refused.text);
    const ok = await uploadFile(base, '/api/v1/uploadedfiles/shared', admin, 'shared.csv', 'userid,team\n1,core\n');
    t.equal(ok.status, 200, ok.text);
    t.equal((await api(base, '/api/v1/uploadedfiles/shared/shared.csv', { token: member.token, method: 'DELETE' })).status, 403);
  });

  const now = Date.now();
  const events: KnownEvent[] = [
    { timestamp: now - 5000, rawstring: 'u1', attributes: { uid: '1', host: 'web1', ip: '10.1.2.3', url: '/app/login?x=1', who: 'ADA LOVELACE' }, tags: { src: 'app' } },
    { timestamp: now - 4000, rawstring: 'u2', attributes: { uid: '2', host: 'db1', ip: '10.9.9.9', url: '/static/site.css', who: 'nobody' }, tags: { src: 'app' } },
    { timestamp: now - 3000, rawstring: 'u3', attributes: { uid: '3', host: 'mail', ip: '192.168.1.7', url: '/index.php', who: 'x' }, tags: { src: 'app' } },
    { timestamp: now - 2000, rawstring: 'u9', attributes: { uid: '9', host: 'web1', ip: '2001:db8::1', url: '/', who: 'y' }, tags: { src: 'app' } },
  ];
  await ingestStructured(base, repo.ingestToken, events);
  await ingestStructured(base, other.ingestToken, [{ timestamp: now - 1000, rawstring: 'o1', attributes: { uid: '1' }, tags: { src: 'o' } }]);
  t.equal(await waitForCount(base, 'files1', admin, 4), 4);
  t.equal(await waitForCount(base, 'files2', admin, 1), 1);

  const q = async (queryString: string, repoName = 'files1', token = member.token): Promise<Record<string, any>[]> => {
    const rows = await queryJson(base, repoName, { queryString: `${queryString} | sort(@rawstring, order=asc)` }, { token });
    return rows;
  };
  const pick = (rows: Record<string, any>[], ...names: string[]) => rows.map((r) => Object.fromEntries([['@rawstring', r['@rawstring']], ...names.map((n) => [n, r[n]])]));

  await t.test('match(): exact string mode, strict and not, include, nrows, column', async (t) => {
    t.strictSame(pick(await q('match(file="users.csv", field=uid, column=userid)'), 'name', 'role'), [
      { '@rawstring': 'u1', name: 'Ada Lovelace', role: 'admin' },
      { '@rawstring': 'u2', name: 'Second Two', role: 'dup' },
      { '@rawstring': 'u3', name: ' spaced ', role: 'ops' },
    ], 'strict by default; whitespace kept; the LAST matching row (as the product)');
    t.strictSame(pick(await q('match(file="users.csv", field=uid, column=userid, strict=false, include=[name])'), 'name', 'role'), [
      { '@rawstring': 'u1', name: 'Ada Lovelace', role: undefined },
      { '@rawstring': 'u2', name: 'Second Two', role: undefined },
      { '@rawstring': 'u3', name: ' spaced ', role: undefined },
      { '@rawstring': 'u9', name: undefined, role: undefined },
    ], 'strict=false passes unmatched events; include limits the columns');
    const two = pick(await q('match(file="users.csv", field=uid, column=userid, nrows=2) | uid=2'), 'name');
    t.strictSame(two.map((r) => r.name).sort(), ['Second Two', 'Turing, Alan'], 'nrows=2: one event per matching row (quoted comma kept)');
    t.strictSame(pick(await q('match(file="users.csv", field=[uid, who], column=[userid, name], ignoreCase=true)'), 'role'), [{ '@rawstring': 'u1', role: 'admin' }], 'several fields must all match');
    t.strictSame(pick(await q('match(file="users.csv", field=who, column=name, ignoreCase=true)'), 'role'), [{ '@rawstring': 'u1', role: 'admin' }], 'ignoreCase');
    t.strictSame(await q('match(file="users.csv", field=who, column=name)'), [], 'case matters by default');
  });

  await t.test('match(): glob and cidr modes', async (t) => {
    t.strictSame(pick(await q('match(file="globs.csv", field=url, column=pattern, mode=glob)'), 'kind'), [
      { '@rawstring': 'u1', kind: 'auth' },
      { '@rawstring': 'u2', kind: 'asset' },
      { '@rawstring': 'u3', kind: 'legacy' },
    ]);
    const byRawAndZone = (rows: Record<string, any>[]) => rows.sort((a, b) => `${a['@rawstring']} ${a.zone}`.localeCompare(`${b['@rawstring']} ${b.zone}`));
    t.strictSame(byRawAndZone(pick(await q('match(file="nets.csv", field=ip, column=subnet, mode=cidr, nrows=3)'), 'zone')), [
      { '@rawstring': 'u1', zone: 'internal' },
      { '@rawstring': 'u1', zone: 'lab' },
      { '@rawstring': 'u2', zone: 'internal' },
      { '@rawstring': 'u3', zone: 'printer' },
      { '@rawstring': 'u9', zone: 'v6net' },
    ], 'IPv4 and IPv6 subnets; several matching rows');
    const first = pick(await q('match(file="nets.csv", field=ip, column=subnet, mode=cidr) | @rawstring=u1'), 'zone');
    t.strictSame(first, [{ '@rawstring': 'u1', zone: 'lab' }], 'nrows=1 gives the most specific subnet');
  });

  await t.test('JSON files: keyed object and array of objects; lookup()', async (t) => {
    t.strictSame(pick(await q('match(file="hosts.json", field=host)'), 'dc', 'tier'), [
      { '@rawstring': 'u1', dc: 'east', tier: 'front' },
      { '@rawstring': 'u9', dc: 'east', tier: 'front' },
    ], 'a keyed object matches on its key');
    t.strictSame(pick(await q('match(file="hosts.json", field=host, ignoreCase=true) | @rawstring=u2'), 'port'), [{ '@rawstring': 'u2', port: '5432' }]);
    t.strictSame(pick(await q('lookup(file="owners.json", field=host, on=host)'), 'owner'), [
      { '@rawstring': 'u1', owner: 'team-a' },
      { '@rawstring': 'u2', owner: 'team-b' },
      { '@rawstring': 'u3', owner: undefined },
      { '@rawstring': 'u9', owner: 'team-a' },
    ], 'lookup() enriches and keeps unmatched events (strict=false)');
    t.strictSame(pick(await q('lookup(file="users.csv", column=userid, field=uid, include=[role], strict=true)'), 'role').map((r) => r.role), ['admin', 'dup', 'ops']);
    t.strictSame(pick(await q('lookup(file="hosts.json", field=host)'), 'dc'), [
      { '@rawstring': 'u1', dc: 'east' },
      { '@rawstring': 'u2', dc: undefined },
      { '@rawstring': 'u3', dc: undefined },
      { '@rawstring': 'u9', dc: 'east' },
    ], 'lookup() on a keyed JSON object (its key, case-sensitive)');
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'jnets.json', JSON.stringify([{ net: '10.0.0.0/8', zone: 'j8' }, { net: '10.1.0.0/16', zone: 'j16' }]))).status, 200);
    t.equal((await uploadFile(base, '/api/v1/repositories/files1/files', member.token, 'jglobs.json', JSON.stringify({ '*.php': { kind: 'php' }, '/static/*': { kind: 'static' } }))).status, 200);
    t.strictSame(pick(await q('match(file="jnets.json", field=ip, column=net, mode=cidr)'), 'zone'), [
      { '@rawstring': 'u1', zone: 'j16' },
      { '@rawstring': 'u2', zone: 'j8' },
    ], 'a JSON array file in cidr mode');
    t.strictSame(pick(await q('match(file="jglobs.json", field=url, mode=glob)'), 'kind'), [
      { '@rawstring': 'u2', kind: 'static' },
      { '@rawstring': 'u3', kind: 'php' },
    ], 'a keyed JSON file in glob mode (on its key)');
  });

  await t.test('shared files from any repository; aggregates; query jobs', async (t) => {
    t.strictSame(pick(await q('match(file="/shared/shared.csv", field=uid, column=userid)', 'files2', admin), 'team'), [{ '@rawstring': 'o1', team: 'core' }]);
    t.strictSame(pick(await q('match(file="/shared/shared.csv", field=uid, column=userid)'), 'team'), [{ '@rawstring': 'u1', team: 'core' }]);
    const rows = await queryJson(base, 'files1', { queryString: 'match(file="users.csv", field=uid, column=userid) | groupBy(role)' }, { token: member.token });
    t.strictSame(rows.map((r) => `${r.role}=${r._count}`).sort(), ['admin=1', 'dup=1', 'ops=1']);
  });

  await t.test('a missing file, column or bad mode is a query error naming it', async (t) => {
    const r = await postQuery(base, 'files1', { queryString: 'match(file="nope.csv", field=uid)' }, { token: member.token });
    t.equal(r.status, 400);
    t.match(r.text, /"nope\.csv" does not exist/);
    const r2 = await postQuery(base, 'files2', { queryString: 'match(file="users.csv", field=uid, column=userid)' }, { token: admin });
    t.equal(r2.status, 400, 'a repository file is not visible from another repository');
    const r3 = await postQuery(base, 'files1', { queryString: 'match(file="users.csv", field=uid, column=nosuch)' }, { token: member.token });
    t.equal(r3.status, 400);
    t.match(r3.text, /no column "nosuch"/);
    const r4 = await postQuery(base, 'files1', { queryString: 'match(file="users.csv", field=uid, column=userid, mode=fuzzy)' }, { token: member.token });
    t.equal(r4.status, 400);
    t.match(r4.text, /mode must be/);
  });

  await t.test('replace is atomic and removal through GraphQL', async (t) => {
    const up = await uploadFile(base, '/api/v1/repositories/files1/files', admin, 'users.csv', 'userid,name,role\n1,Ada v2,boss\n');
    t.equal(up.status, 200);
    t.strictSame(pick(await q('match(file="users.csv", field=uid, column=userid)'), 'role'), [{ '@rawstring': 'u1', role: 'boss' }], 'queries see the new content');
    await mustGql(base, member.token, 'mutation { removeFile(name: "files1", fileName: "users.csv") { __typename } }');
    t.equal((await api(base, '/api/v1/repositories/files1/files/users.csv', { token: admin })).status, 404);
    const r = await postQuery(base, 'files1', { queryString: 'match(file="users.csv", field=uid)' }, { token: member.token });
    t.equal(r.status, 400);
    const refused = await mustGql(base, admin, '{ searchDomain(name: "files1") { files { nameAndPath { name path } } } }');
    t.ok(refused.searchDomain.files.some((f: any) => f.nameAndPath.name === '/shared/shared.csv' && f.nameAndPath.path === '/shared'), 'shared files are listed by the name queries use, with path /shared');
    t.notOk(refused.searchDomain.files.some((f: any) => f.nameAndPath.name === 'shared.csv'), 'never as if they were repository files');
    // The listed name is the one removeFile takes.
    await mustGql(base, admin, 'mutation { removeFile(name: "files1", fileName: "/shared/shared.csv") { __typename } }');
    const after = await mustGql(base, admin, '{ searchDomain(name: "files2") { files { nameAndPath { name } } } }');
    t.strictSame(after.searchDomain.files, [], 'removed from the shared scope');
    t.equal((await uploadFile(base, '/api/v1/uploadedfiles/shared', admin, 'shared.csv', 'userid,team\n1,core\n')).status, 200);
    t.equal((await api(base, '/api/v1/uploadedfiles/shared/shared.csv', { token: admin, method: 'DELETE' })).status, 204);
  });
});

t.test('a sparse JSON file is refused by its cell count (413), and the node stays up; the total bound', async (t) => {
  t.setTimeout(60_000);
  const node = await startNode(t, { config: '[files]\nmax_total_bytes = 1048576\n' });
  await createRepo(node.url, node.adminToken, 'sparse1');
  // 24 KB that would pad to 5,000 rows x 1,000 columns (5 million cells) if it were read densely.
  const sparseRows = [...Array.from({ length: 1000 }, (_, i) => ({ [`m${i}`]: 'v' })), ...Array.from({ length: 4000 }, () => ({}))];
  const sparse = await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'sparse.json', JSON.stringify(sparseRows));
  t.equal(sparse.status, 413, sparse.text);
  // Refused at the row where the cells pass the bound (streamed), not after reading all 5,000.
  t.match(sparse.text, /the file has 1049 rows of 1000 columns \(1049000 cells\), more than the 1048576 cells/);
  const ok = await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'dense.json', JSON.stringify(sparseRows.slice(0, 300)));
  t.equal(ok.status, 200, `a sparse file within the bound is accepted: ${ok.text}`);

  // The same bytes as .json and as .csv are two different tables (cached by hash and kind).
  const bytes = '[{"a":"1"}]';
  t.equal((await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'same.json', bytes)).status, 200);
  const asCsv = await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'same.csv', bytes);
  t.equal(asCsv.status, 400, `read as CSV, not served from the JSON table: ${asCsv.text}`);
  t.match(asCsv.text, /CSV/);

  // files.max_total_bytes: distinct contents count once, across repositories.
  const big = (c: string) => `k,v\n${`${c},${'x'.repeat(150)}\n`.repeat(4000)}`;
  t.equal((await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'big1.csv', big('a'))).status, 200);
  t.equal((await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'big1-copy.csv', big('a'))).status, 200, 'the same bytes again take no more room');
  const over = await uploadFile(node.url, '/api/v1/repositories/sparse1/files', node.adminToken, 'big2.csv', big('b'));
  t.equal(over.status, 409, over.text);
  t.match(over.text, /files\.max_total_bytes/);
});
