/**
 * Retention against real nodes. Time is controlled through the events' own timestamps (days in the
 * past), sizes through limits small enough for a few kilobytes. Each block closes its segment at
 * once (blocks_per_segment = 1, flush_block_seconds = 1) and the sweep runs every second.
 */
import t from 'tap';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startNode, type TestNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createJob, createRepo, ingestStructured, mustGql, pollUntilDone, sleep, type KnownEvent, until } from '../helpers/query.js';
import { segmentFiles } from '../helpers/segments.js';
import { DELETION_STEPS } from '../../src/segments/deletions.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(300_000);

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'flush_block_seconds = 1', 'blocks_per_segment = 1', '[retention]', 'interval_seconds = 1', ''].join('\n');
const DAY = 86_400_000;

const doc = (operation: string): string => {
  const d = HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation);
  if (d === undefined) throw new Error(`no humioctl document ${operation}`);
  return d.document;
};

/** `n` events `ageMs` old, tagged so that each call makes its own datasource (and so its own segments). */
function events(n: number, ageMs: number, batch: string): KnownEvent[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({ timestamp: now - ageMs + i, rawstring: `retention ${batch} event ${i} padding=${'x'.repeat(40)}`, attributes: { i, batch }, tags: { batch } }));
}

async function repoSize(node: TestNode, name: string): Promise<{ compressedByteSize: number; uncompressedByteSize: number }> {
  return (await mustGql(node.url, node.adminToken, 'query($n: String!) { repository(name: $n) { compressedByteSize uncompressedByteSize } }', { n: name })).repository;
}

const ALL_TIME = { start: '3650days' };
const countAll = (node: TestNode, repo: string): Promise<number> => countOf(node.url, repo, node.adminToken, '', ALL_TIME);
const repoFiles = async (node: TestNode, repoId: string): Promise<string[]> => (await segmentFiles(node.dataDir)).filter((f) => f.includes(`/segments/${repoId}/`));

const node = await startNode(t, { config: CONFIG });

t.test("humioctl's repository, cluster, group and token operations answer", async (t) => {
  const created = await mustGql(node.url, node.adminToken, doc('CreateRepository'), { RepositoryName: 'ctl' });
  t.match(created.createRepository.repository, { name: 'ctl', timeBasedRetention: null, ingestSizeBasedRetention: null, storageSizeBasedRetention: null, compressedByteSize: 0, automaticSearch: true, s3ArchivingConfiguration: null });
  await mustGql(node.url, node.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: 'ctl', RetentionInDays: 7.5 });
  await mustGql(node.url, node.adminToken, doc('UpdateStorageBasedRetention'), { RepositoryName: 'ctl', StorageInGB: 2 });
  await mustGql(node.url, node.adminToken, doc('UpdateIngestBasedRetention'), { RepositoryName: 'ctl', IngestInGB: 10 });
  const shown = await mustGql(node.url, node.adminToken, doc('GetRepository'), { RepositoryName: 'ctl' });
  t.match(shown.repository, { timeBasedRetention: 7.5, storageSizeBasedRetention: 2, ingestSizeBasedRetention: 10 });
  await mustGql(node.url, node.adminToken, doc('UpdateStorageBasedRetention'), { RepositoryName: 'ctl', StorageInGB: null });
  t.equal((await mustGql(node.url, node.adminToken, doc('GetRepository'), { RepositoryName: 'ctl' })).repository.storageSizeBasedRetention, null, 'null removes a limit, the others stay');
  const bad = await api(node.url, '/graphql', { token: node.adminToken, body: JSON.stringify({ query: doc('UpdateTimeBasedRetention'), variables: { RepositoryName: 'ctl', RetentionInDays: -1 } }) });
  t.match(bad.json().errors[0].message, /timeBasedRetention \(days\): must be a positive number/);
  await mustGql(node.url, node.adminToken, doc('SetAutomaticSearching'), { SearchDomainName: 'ctl', AutomaticSearch: false });
  t.equal((await mustGql(node.url, node.adminToken, doc('GetSearchDomain'), { SearchDomainName: 'ctl' })).searchDomain.automaticSearch, false);
  const list = await mustGql(node.url, node.adminToken, doc('ListRepositories'));
  t.ok(list.repositories.some((r: { name: string; compressedByteSize: number }) => r.name === 'ctl' && r.compressedByteSize === 0));

  const cluster = (await mustGql(node.url, node.adminToken, doc('GetCluster'))).cluster;
  t.equal(cluster.clusterInfoAgeSeconds, 0);
  t.equal(cluster.nodes.length, 1);
  t.ok(cluster.nodes[0].totalSizeOfPrimary > 0 && cluster.nodes[0].freeOnPrimary > 0, 'disk sizes of the data dir');
  t.equal(cluster.nodes[0].canBeSafelyUnregistered, false);

  t.strictSame((await mustGql(node.url, node.adminToken, doc('ListGroups'))).groupsPage.page, []);
  const addToGroup = await api(node.url, '/graphql', { token: node.adminToken, body: JSON.stringify({ query: doc('AddUserToGroup'), variables: { GroupID: 'g1', UserID: 'u1' } }) });
  t.match(addToGroup.json().errors[0].message, /group "g1" does not exist/);
  t.strictSame((await mustGql(node.url, node.adminToken, doc('ListRoles'))).roles, []);

  const me = (await mustGql(node.url, node.adminToken, 'mutation { addUserV2(input: {username: "rot"}) { ... on User { id } } }')).addUserV2;
  const token = (await mustGql(node.url, node.adminToken, doc('RotateTokenByID'), { TokenID: me.id })).rotateToken;
  t.equal((await mustGql(node.url, token, '{ viewer { username } }')).viewer.username, 'rot', 'the rotated token works');

  for (const op of ['ListFilterAlerts', 'ListAggregateAlerts', 'ListScheduledSearches', 'ListScheduledSearchesV2']) {
    const d = (await mustGql(node.url, node.adminToken, doc(op), { SearchDomainName: 'ctl' })).searchDomain;
    t.strictSame(Object.values(d)[0], [], `${op}: none`);
  }
  const notBuilt = await api(node.url, '/graphql', { token: node.adminToken, body: JSON.stringify({ query: doc('EnableS3Archiving'), variables: { RepositoryName: 'ctl' } }) });
  t.match(notBuilt.json().errors[0], { message: /S3 archiving is not built/, extensions: { code: 'E_NOT_BUILT' } });

  await mustGql(node.url, node.adminToken, doc('DeleteSearchDomain'), { SearchDomainName: 'ctl', DeleteMessage: 'bye' });
});

t.test('createRepository takes retention in milliseconds and bytes', async (t) => {
  const r = await mustGql(node.url, node.adminToken, 'mutation { createRepository(name: "timed", retentionInMillis: 172800000, retentionInStorageSizeBytes: 5000000000) { repository { timeBasedRetention storageSizeBasedRetention ingestSizeBasedRetention } } }');
  t.strictSame(r.createRepository.repository, { timeBasedRetention: 2, storageSizeBasedRetention: 5, ingestSizeBasedRetention: null });
});

t.test('time retention: old segments leave the results and the disk, newer data stays', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'aging');
  await ingestStructured(node.url, repo.ingestToken, events(40, 10 * DAY, 'old'));
  await ingestStructured(node.url, repo.ingestToken, events(30, 2 * DAY, 'mid'));
  await ingestStructured(node.url, repo.ingestToken, events(20, 3_600_000, 'new'));
  await until('all 90 events searchable', () => countAll(node, 'aging'), (n) => n === 90);
  await until('three segments on disk', () => repoFiles(node, repo.id), (f) => f.length === 3);
  const before = await until('sizes', () => repoSize(node, 'aging'), (s) => s.compressedByteSize > 0);
  t.ok(before.uncompressedByteSize > 0);

  await mustGql(node.url, node.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: 'aging', RetentionInDays: 5 });
  await until('the old segment gone', () => repoFiles(node, repo.id), (f) => f.length === 2);
  t.equal(await countAll(node, 'aging'), 50, 'the 10-day-old events are gone, the 2-day-old and new ones stay');
  t.equal(await countOf(node.url, 'aging', node.adminToken, 'batch=old', ALL_TIME), 0);
  const after = await repoSize(node, 'aging');
  t.ok(after.compressedByteSize < before.compressedByteSize, `compressedByteSize went down (${before.compressedByteSize} -> ${after.compressedByteSize})`);

  await mustGql(node.url, node.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: 'aging', RetentionInDays: 1 });
  await until('the mid segment gone', () => repoFiles(node, repo.id), (f) => f.length === 1);
  t.equal(await countAll(node, 'aging'), 20);
});

t.test('storage-size retention deletes the oldest segments until the rest fits', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'sized');
  for (let i = 0; i < 5; i++) await ingestStructured(node.url, repo.ingestToken, events(20, (10 - i) * 3_600_000, `b${i}`));
  const files = await until('five segments', () => repoFiles(node, repo.id), (f) => f.length === 5);
  // The catalog learns of a segment just after its file appears: measure once it counts all five.
  const onDisk = (await Promise.all(files.map((f) => stat(f)))).reduce((n, s) => n + s.size, 0);
  const { compressedByteSize: total } = await until('the repository size to count all five', () => repoSize(node, 'sized'), (s) => s.compressedByteSize === onDisk);
  // Room for about two and a half of the five (similar) segments: the three oldest go.
  const limitGb = (total * 0.5) / 1e9;
  await mustGql(node.url, node.adminToken, doc('UpdateStorageBasedRetention'), { RepositoryName: 'sized', StorageInGB: limitGb });
  await until('two segments left', () => repoFiles(node, repo.id), (f) => f.length === 2);
  t.equal(await countAll(node, 'sized'), 40);
  t.equal(await countOf(node.url, 'sized', node.adminToken, 'batch=b3 or batch=b4', ALL_TIME), 40, 'the two newest batches stay');
  t.ok((await repoSize(node, 'sized')).compressedByteSize <= total * 0.5);
});

t.test('a query job started before a deletion finishes with its snapshot', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'snap');
  for (let i = 0; i < 6; i++) await ingestStructured(node.url, repo.ingestToken, events(200, 10 * DAY + i, `s${i}`));
  await until('six segments', () => repoFiles(node, repo.id), (f) => f.length === 6);
  const job = await createJob(node.url, 'snap', node.adminToken, { queryString: 'event | count()', ...ALL_TIME });
  t.equal(job.status, 200, job.text);
  await mustGql(node.url, node.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: 'snap', RetentionInDays: 1 });
  const polls = await pollUntilDone(node.url, 'snap', node.adminToken, job.json().id as string);
  const final = polls.at(-1)!;
  t.equal(final.done, true);
  t.strictSame(final.events, [{ _count: '1200' }], 'every event of the snapshot was read, although retention deleted the segments meanwhile');
  await until('segments gone after the job', () => repoFiles(node, repo.id), (f) => f.length === 0);
  t.equal(await countAll(node, 'snap'), 0);
});

t.test('deleting a repository removes its segments and directory and its tokens', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'doomed');
  await ingestStructured(node.url, repo.ingestToken, events(30, 3_600_000, 'd'));
  await until('a segment', () => repoFiles(node, repo.id), (f) => f.length === 1);
  await mustGql(node.url, node.adminToken, doc('DeleteSearchDomain'), { SearchDomainName: 'doomed', DeleteMessage: 'test' });
  await until('the repository directory gone', async () => (await readdir(join(node.dataDir, 'segments'))).includes(repo.id), (present) => !present);
  const ingest = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body: '[]' });
  t.equal(ingest.status, 401, 'its ingest token no longer works');
});

t.test('kill -9 during deletions leaves a consistent catalog', async (t) => {
  const dir = node.dataDir;
  t.equal(await node.stop(), 0);
  let current = await startNode(t, { dataDir: dir, config: CONFIG });
  const done: string[] = [];
  for (const delayMs of [0, 5, 20, 60]) {
    // A repository per kill: a retention decision stands once made (the bound in global state),
    // so old data sent to a repository that already decided on it would go at once.
    const name = `crashy${delayMs}`;
    const repo = await createRepo(current.url, current.adminToken, name);
    for (let i = 0; i < 8; i++) await ingestStructured(current.url, repo.ingestToken, events(10, 20 * DAY, `old${delayMs}-${i}`));
    await ingestStructured(current.url, repo.ingestToken, events(10, 60_000, `new${delayMs}`));
    // Every segment written and closed before the deletion starts (a kill during a segment write is another test's subject).
    await until('the segments written', () => repoFiles(current, repo.id), (f) => f.length === 9);
    await sleep(500);
    await mustGql(current.url, current.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: name, RetentionInDays: 3 });
    await sleep(delayMs);
    await current.kill();
    const verify = await runCli(['segments', 'verify', dir]);
    t.equal(verify.code, 0, `segments verify after kill -9 at ${delayMs} ms: ${verify.stdout.slice(-300)}${verify.stderr}`);
    current = await startNode(t, { dataDir: dir, config: CONFIG });
    // The sweep at start finishes the job; nothing old comes back from a replay, nothing new is lost.
    await until('old data gone after restart', () => countOf(current.url, name, current.adminToken, '', ALL_TIME), (n) => n === 10);
    t.equal(await countOf(current.url, name, current.adminToken, 'batch=/^old/', ALL_TIME), 0);
    t.equal((await until('the old files unlinked', () => repoFiles(current, repo.id), (f) => f.length === 1)).length, 1, 'one segment left on disk, the new one');
    done.push(name);
    for (const d of done) t.equal(await countOf(current.url, d, current.adminToken, '', ALL_TIME), 10, `${d}: still its new events after the later kills`);
  }
  t.equal(await current.stop(), 0);
});

t.test('kill -9 at each step of a deletion (test seam): a consistent catalog, and the restart finishes the deletion', async (t) => {
  for (const step of DELETION_STEPS) {
    // The node kills itself with SIGKILL right after `step` of its first deletion (src/segments/deletions.ts).
    const first = await startNode(t, { config: CONFIG, env: { LOGSVC_TEST_CRASH_DELETION: step } });
    const name = `step-${step}`;
    const repo = await createRepo(first.url, first.adminToken, name);
    for (let i = 0; i < 4; i++) await ingestStructured(first.url, repo.ingestToken, events(10, 20 * DAY, `old-${step}-${i}`));
    await ingestStructured(first.url, repo.ingestToken, events(10, 60_000, `new-${step}`));
    await until('the segments written', () => repoFiles(first, repo.id), (f) => f.length === 5);
    await sleep(500);
    await mustGql(first.url, first.adminToken, doc('UpdateTimeBasedRetention'), { RepositoryName: name, RetentionInDays: 3 });
    await until(`the node killed itself after "${step}"`, async () => first.proc.exitCode !== null || first.proc.signalCode !== null, (x) => x);
    t.equal(first.proc.signalCode, 'SIGKILL', `${step}: killed by the seam`);
    const atCrash = (await repoFiles(first, repo.id)).length;
    if (step === 'decided' || step === 'uncataloged') t.equal(atCrash, 5, `${step}: no file unlinked yet`);
    else if (step === 'unlinked-first') t.ok(atCrash >= 2 && atCrash <= 4, `${step}: some old files unlinked, not all (${atCrash} of 5 left)`);
    else t.equal(atCrash, 1, `${step}: every old file unlinked, the manifest still lists them`);
    const verify = await runCli(['segments', 'verify', first.dataDir]);
    t.equal(verify.code, 0, `${step}: segments verify after the kill: ${verify.stdout.slice(-300)}${verify.stderr}`);

    const again = await startNode(t, { dataDir: first.dataDir, config: CONFIG });
    t.equal(await countOf(again.url, name, again.adminToken, '', ALL_TIME), 10, `${step}: after the restart only the new events, at once`);
    t.equal(await countOf(again.url, name, again.adminToken, `batch=/^old/`, ALL_TIME), 0);
    t.equal((await repoFiles(again, repo.id)).length, 1, `${step}: one segment left on disk, the new one`);
    const after = await runCli(['segments', 'verify', first.dataDir]);
    t.equal(after.code, 0, `${step}: segments verify after the restart: ${after.stdout.slice(-300)}${after.stderr}`);
    t.equal(await again.stop(), 0);
  }
});
