/**
 * Warnings that arise after a streamed /query answer's headers went out reach the client: a block
 * damaged on disk is found only when the scan reaches it, long after the first 256 KiB of events
 * were sent; the answer's last element then says so — `{"@warnings": [...]}` as the last NDJSON
 * line or the last element of the JSON array, `logsvc warning: ...` as the last text line — while
 * a small answer still carries it in the Warning header. Nothing else in the answer changes: every
 * intact event arrives once.
 */
import { open } from 'node:fs/promises';
import t from 'tap';
import { startNode, tempDir } from '../helpers/node-process.js';
import { createRepo, ingestStructured, parseNdjson, postQuery, runJob, waitForCount, type KnownEvent } from '../helpers/query.js';
import { inspectAll } from '../helpers/segments.js';

t.setTimeout(600_000);
// The restarted node is started on the file's tap object, so it outlives the setup subtest.
const top = t;

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', ''].join('\n');
const dataDir = await tempDir(t);
let node = await startNode(t, { dataDir, config: CONFIG });
let token = node.adminToken;
let lost: string[] = [];

// 30,000 events of ~300 bytes, oldest first (about 9 MB: far past the 256 KiB held back); one block per request of 5,000.
const N = 30_000;
const now = Date.now();
const PAD = 'y'.repeat(200);
t.test('setup: events in segments, the oldest block damaged on disk', async (t) => {
  const repo = await createRepo(node.url, node.adminToken, 'dmg');
  const events: KnownEvent[] = Array.from({ length: N }, (_, i) => ({ timestamp: now - 3_600_000 + i * 10, rawstring: `ev ${i} ${PAD}`, attributes: { n: String(i) }, tags: { host: 'h' } }));
  await ingestStructured(node.url, repo.ingestToken, events, 5000);
  t.equal(await waitForCount(node.url, 'dmg', node.adminToken, N, 120_000), N, 'every event is searchable');
  t.equal(await node.stop(), 0, 'the node stops cleanly');

  // Damage the block holding the oldest events (scanned last: newer data is read first).
  const segs = (await inspectAll(dataDir)).filter((s) => s.blocks.length > 0);
  t.ok(segs.length > 0, 'segments were written');
  const withOldest = segs.map((s) => ({ s, min: Math.min(...s.events.map((e) => Number(e['@timestamp']))) })).sort((a, b) => a.min - b.min)[0]!;
  const blockIdx = 0;
  const victim = withOldest.s.blocks[blockIdx]!;
  lost = withOldest.s.events.slice(0, victim.events).map((e) => String(e.n));
  t.ok(lost.includes('0'), 'the damaged block holds event 0');
  const fh = await open(withOldest.s.file, 'r+');
  try {
    const at = victim.pos + victim.length - 16;
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, at);
    b[0] = b[0]! ^ 0xff;
    await fh.write(b, 0, 1, at);
  } finally {
    await fh.close();
  }
  node = await startNode(top, { dataDir, config: CONFIG });
  token = node.adminToken;
});

const DAMAGE = /segment .*: the block at \d+ is damaged and was left out \(run logsvc segments verify\)/;

t.test('NDJSON: the last line says the answer is partial', async (t) => {
  const res = await postQuery(node.url, 'dmg', { queryString: 'n=*', start: '1d' }, { token, format: 'ndjson', timeoutMs: 120_000 });
  t.equal(res.status, 200);
  t.equal(res.headers.get('warning'), null, 'the damage was found after the headers went out');
  const rows = parseNdjson(res.text);
  const last = rows.pop()!;
  t.same(Object.keys(last), ['@warnings'], 'the last line is the warnings element');
  t.match(last['@warnings'], [DAMAGE]);
  t.equal(rows.length, N - lost.length, 'every intact event');
  t.notOk(rows.some((r) => '@warnings' in r), 'only once, at the end');
});

t.test('JSON array: the last element; text: the last line', async (t) => {
  const js = await postQuery(node.url, 'dmg', { queryString: '', start: '1d' }, { token, format: 'json', timeoutMs: 120_000 });
  t.equal(js.status, 200);
  const arr = js.json() as Record<string, any>[];
  t.ok(Array.isArray(arr), 'still one JSON array');
  t.match(arr[arr.length - 1], { '@warnings': [DAMAGE] });
  t.equal(arr.length, N - lost.length + 1);

  const text = await postQuery(node.url, 'dmg', { queryString: '', start: '1d' }, { token, format: 'text', timeoutMs: 120_000 });
  t.equal(text.status, 200);
  const lines = text.text.split('\n');
  t.equal(lines.pop(), '', 'ends with a newline');
  t.match(lines[lines.length - 1], /^logsvc warning: segment .* is damaged and was left out/);
  t.equal(lines.length, N - lost.length + 1);
});

t.test('a query job says the same in metaData.warnings', async (t) => {
  const job = await runJob(node.url, 'dmg', token, { queryString: 'n=* | count()', start: '1d' });
  t.match(job.final.metaData.warnings, [DAMAGE]);
  t.same(job.final.events, [{ _count: String(N - lost.length) }]);
});

t.test('a small answer still has it in the Warning header, and no extra element', async (t) => {
  const res = await postQuery(node.url, 'dmg', { queryString: 'n=1 or n=29999', start: '1d' }, { token, format: 'ndjson' });
  t.equal(res.status, 200);
  t.match(res.headers.get('warning') ?? '', /299 logsvc "segment .* is damaged and was left out/);
  const rows = parseNdjson(res.text);
  t.same(rows.map((r) => r.n), ['29999'], 'only the intact match; no warnings element');
});
