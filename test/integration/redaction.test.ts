/**
 * Event redaction (the product's redactEvents) against real nodes: the events a query matches in a
 * time range leave the results and the segment files, the others stay, the task's status says when
 * it is done; and a node that kills itself (SIGKILL) in the middle of a segment rewrite, before or
 * after the swap is decided, comes back with exactly one of the old and new segment, a clean
 * `segments verify`, no event twice and none lost, and finishes the task.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { runCli, startNode, type TestNode } from '../helpers/node-process.js';
import { gql } from '../helpers/http.js';
import { countOf, createRepo, ingestStructured, mustGql, sleep, type KnownEvent } from '../helpers/query.js';
import { segmentFiles } from '../helpers/segments.js';

t.setTimeout(300_000);
/** Nodes are started on the file's test, not a subtest's: a subtest's teardown would stop them when it ends. */
const root = t;

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'flush_block_seconds = 1', 'blocks_per_segment = 1', '[retention]', 'interval_seconds = 1', ''].join('\n');
const ALL_TIME = { start: '3650days' };
const HOUR = 3_600_000;

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await sleep(200);
  }
}

/** 40 events of one batch: statuses 500 and 200 alternating, spread over the last two hours. */
function batch(name: string, base: number): KnownEvent[] {
  return Array.from({ length: 40 }, (_, i) => ({
    timestamp: base - i * 3 * 60_000,
    rawstring: `${name} event ${i} status=${i % 2 === 0 ? 500 : 200} secret=${name}-${i}`,
    attributes: { status: i % 2 === 0 ? '500' : '200', n: String(i), batch: name },
    tags: { batch: name },
  }));
}

const REDACT = 'mutation($r: String!, $s: DateTime!, $e: DateTime!, $q: String!) { redactEvents(input: {repositoryName: $r, start: $s, end: $e, query: $q, userMessage: "gdpr"}) }';
const LIST = 'query($r: String!) { redactEvents(repositoryName: $r, includeFinished: true) { id status query start end createdByUser eventsRedacted segmentsRewritten finishedOnNodes languageVersion { name } } }';

async function tasks(node: TestNode, repo: string): Promise<Record<string, any>[]> {
  return (await mustGql(node.url, node.adminToken, LIST, { r: repo })).redactEvents;
}

const repoFiles = async (node: TestNode, repoId: string): Promise<string[]> => (await segmentFiles(node.dataDir)).filter((f) => f.includes(`/segments/${repoId}/`));

let node = await startNode(t, { config: CONFIG });

t.test('matching events in the range leave the results and the files; the rest stay', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'pii');
  const now = Date.now();
  await ingestStructured(node.url, repo.ingestToken, batch('a', now));
  await ingestStructured(node.url, repo.ingestToken, batch('b', now));
  await until('80 events searchable', () => countOf(node.url, 'pii', node.adminToken, '', ALL_TIME), (n) => n === 80);
  await until('two closed segments', () => repoFiles(node, repo.id), (f) => f.length === 2);
  await sleep(1500);
  // The last hour only: events 0..19 of each batch are in it (3 minutes apart), half of them 500s.
  const start = new Date(now - HOUR + 1000).toISOString();
  const end = new Date(now + 1000).toISOString();
  const id = (await mustGql(node.url, node.adminToken, REDACT, { r: 'pii', s: start, e: end, q: 'status=500 batch=a' })).redactEvents;
  t.type(id, 'string');
  const done = await until('the redaction done', () => tasks(node, 'pii'), (ts) => ts[0]?.status === 'done');
  t.match(done[0], { id, query: 'status=500 batch=a', createdByUser: null, eventsRedacted: 10, segmentsRewritten: 1, finishedOnNodes: [1], languageVersion: { name: 'legacy' } });
  t.strictSame((await mustGql(node.url, node.adminToken, 'query { redactEvents(repositoryName: "pii") { id } }')).redactEvents, [], 'the product\'s list shows only redactions under way');

  t.equal(await countOf(node.url, 'pii', node.adminToken, 'status=500 batch=a', { start: '1h' }), 0, 'no matching event in the range');
  t.equal(await countOf(node.url, 'pii', node.adminToken, 'status=500 batch=a', ALL_TIME), 10, 'matching events outside the range stay');
  t.equal(await countOf(node.url, 'pii', node.adminToken, 'batch=b', ALL_TIME), 40, 'other batches are untouched');
  t.equal(await countOf(node.url, 'pii', node.adminToken, '', ALL_TIME), 70);
  const files = await repoFiles(node, repo.id);
  t.equal(files.length, 2, 'one segment replaced by one');
  const bytes = (await Promise.all(files.map((f) => readFile(f)))).map((b) => b.toString('latin1'));
  for (const i of [0, 2, 4]) t.notOk(bytes.some((b) => b.includes(`a-${i} `) || b.includes(`secret=a-${i}\u0000`)), `a redacted event's text is not in the files (a-${i})`);

  // Bad input names the field.
  const bad = async (vars: Record<string, unknown>): Promise<string> => (await gql(node.url, node.adminToken, REDACT, { r: 'pii', s: start, e: end, q: 'x', ...vars })).errors?.[0]?.message ?? '';
  t.match(await bad({ q: 'count()' }), /query: /, 'an aggregate is no filter');
  t.match(await bad({ q: '' }), /query: required/);
  t.match(await bad({ s: end, e: start }), /start: must not be after end/);
  t.match(await bad({ r: 'nope' }), /repository "nope" does not exist/);
  const cancelled = await gql(node.url, node.adminToken, 'mutation($id: String!) { cancelRedactEvents(input: {repositoryName: "pii", redactionTaskId: $id}) }', { id });
  t.equal(cancelled.data?.cancelRedactEvents, false, 'a finished redaction is not cancelled');
});

for (const step of ['written', 'swapped'] as const) {
  t.test(`kill -9 after the new segment is ${step}: one of the two stays, the task finishes after the restart`, async (t) => {
    const dir = node.dataDir;
    const outcome = await node.stopOutcome();
    t.equal(outcome.code, 0, JSON.stringify(outcome).slice(0, 3000));
    node = await startNode(root, { dataDir: dir, config: CONFIG, env: { LOGSVC_TEST_CRASH_REWRITE: step } });
    const name = `crash-${step}`;
    const repo = await createRepo(node.url, node.adminToken, name);
    const now = Date.now();
    await ingestStructured(node.url, repo.ingestToken, batch('c', now));
    await until('40 events searchable', () => countOf(node.url, name, node.adminToken, '', ALL_TIME), (n) => n === 40);
    await until('a closed segment', () => repoFiles(node, repo.id), (f) => f.length === 1);
    await sleep(1500);
    const before = await repoFiles(node, repo.id);
    await mustGql(node.url, node.adminToken, REDACT, { r: name, s: new Date(now - 10 * HOUR).toISOString(), e: new Date(now + 1000).toISOString(), q: 'status=500' });
    await until('the node killed itself mid-rewrite', async () => node.proc.exitCode !== null || node.proc.signalCode !== null, (x) => x);
    t.equal(node.proc.signalCode, 'SIGKILL');
    const files = await repoFiles(node, repo.id);
    t.equal(files.length, 2, `killed with the old and the new segment both on disk: ${files.join(', ')}`);
    const verify = await runCli(['segments', 'verify', dir]);
    t.equal(verify.code, 0, `segments verify: ${verify.stdout.slice(-300)}${verify.stderr}`);

    const crashNew = files.find((f) => !before.includes(f));
    node = await startNode(root, { dataDir: dir, config: CONFIG });
    // The task resumes at once after the restart and may already be writing its next file, so the
    // recovery is judged by which of the two crash-time files survived it.
    const after = await repoFiles(node, repo.id);
    if (step === 'written') {
      // The crash-time rewrite is removed; the old segment stays unless the resumed task already
      // swapped in a rewrite of its own (a third name).
      t.ok(!after.includes(crashNew!), `an undecided swap: the new segment is removed (${after.join(', ')})`);
      t.ok(after.includes(before[0]!) || after.some((f) => f !== crashNew && !before.includes(f)), 'the old segment stays until the resumed task swaps in its own rewrite');
    } else {
      t.ok(!after.includes(before[0]!), 'a decided swap: the new segment stays (the old one is removed)');
    }
    await until('the redaction finished after the restart', () => tasks(node, name), (ts) => ts[0]?.status === 'done', 60_000);
    t.equal((await repoFiles(node, repo.id)).length, 1, 'in the end: one segment, listed and present');
    t.equal(await countOf(node.url, name, node.adminToken, 'status=500', ALL_TIME), 0, 'the matching events are gone');
    t.equal(await countOf(node.url, name, node.adminToken, 'status=200', ALL_TIME), 20, 'the others are all there, once');
    t.equal(await countOf(node.url, name, node.adminToken, '', ALL_TIME), 20);
  });
}

t.test('the data dir verifies clean at the end', async (t) => {
  t.equal(await node.stop(), 0);
  const verify = await runCli(['segments', 'verify', node.dataDir]);
  t.equal(verify.code, 0, verify.stdout.slice(-300) + verify.stderr);
});
