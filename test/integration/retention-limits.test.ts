/**
 * Retention limits against real nodes, beyond time and storage size (retention.test.ts): ingest-size
 * retention, the node-wide default retention, and the disk-usage watermark on a real small disk (a
 * tmpfs filled with a file), which deletes the oldest segments of any repository, oldest first.
 * Each block closes its segment (blocks_per_segment = 1) and the sweep runs every second; segment
 * files are told apart by their datasource's `batch` tag, read from the data dir.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { open, readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { countOf, createRepo, ingestStructured, mustGql, sleep, type KnownEvent, until } from '../helpers/query.js';
import { segmentFiles } from '../helpers/segments.js';
import { mountTmpfs } from '../helpers/tmpfs.js';
import { parseSegment } from '../../src/segments/segment-file.js';

t.setTimeout(400_000);

const DAY = 86_400_000;
const HOUR = 3_600_000;
const ALL_TIME = { start: '3650days' };
const BASE = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'flush_block_seconds = 1', 'blocks_per_segment = 1'];

/** `n` events `ageMs` old, of datasource `batch` (so each call makes its own segments). */
function events(n: number, ageMs: number, batch: string, pad = 40): KnownEvent[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({ timestamp: now - ageMs + i, rawstring: `${batch} event ${i} ${'x'.repeat(pad)}`, attributes: { i, batch }, tags: { batch } }));
}

/** The repository's segment files in `dataDir`, each with its batch tag and newest event. */
async function segmentsOf(dataDir: string, repoId: string): Promise<{ file: string; batch: string; maxTs: number; bytes: number }[]> {
  const out: { file: string; batch: string; maxTs: number; bytes: number }[] = [];
  for (const f of await segmentFiles(dataDir)) {
    if (!f.includes(`/segments/${repoId}/`)) continue;
    try {
      const buf = await readFile(f);
      const seg = parseSegment(buf, f);
      out.push({ file: f, batch: seg.meta.tags.batch ?? '?', maxTs: Math.max(...seg.blocks.map((b) => b.maxTs)), bytes: buf.length });
    } catch {
      // unlinked between the listing and the read
    }
  }
  return out;
}

const batches = async (n: TestNode, repoId: string): Promise<string[]> => [...new Set((await segmentsOf(n.dataDir, repoId)).map((s) => s.batch))].sort();
const countAll = (n: TestNode, repo: string): Promise<number> => countOf(n.url, repo, n.adminToken, '', ALL_TIME);

t.test('ingest-size retention deletes the oldest segments until the data before compression fits', async (t) => {
  const node = await startNode(t, { config: [...BASE, '[retention]', 'interval_seconds = 1', ''].join('\n') });
  const repo = await createRepo(node.url, node.adminToken, 'ingested');
  for (let i = 0; i < 5; i++) await ingestStructured(node.url, repo.ingestToken, events(30, (10 - i) * HOUR, `b${i}`));
  await until('five batches in closed segments', () => batches(node, repo.id), (b) => b.length === 5);
  await until('every event searchable', () => countAll(node, 'ingested'), (n) => n === 150);
  const size = async () => (await mustGql(node.url, node.adminToken, '{ repository(name: "ingested") { compressedByteSize uncompressedByteSize } }')).repository as { compressedByteSize: number; uncompressedByteSize: number };
  const before = await size();
  t.ok(before.uncompressedByteSize > before.compressedByteSize, `ingest size ${before.uncompressedByteSize} > stored size ${before.compressedByteSize}`);
  // Room for a little over two of the five (similar) batches before compression; the stored size alone would keep more.
  const limit = before.uncompressedByteSize * 0.45;
  t.ok(before.compressedByteSize > limit * 0.3, 'the stored bytes are not what is measured');
  await mustGql(node.url, node.adminToken, 'mutation($g: Float!) { updateRetention(repositoryName: "ingested", ingestSizeBasedRetention: $g) { repository { name } } }', { g: limit / 1e9 });
  const left = await until('the oldest batches gone', () => batches(node, repo.id), (b) => b.length <= 2);
  t.strictSame(left, ['b3', 'b4'], 'the two newest batches stay');
  const after = await size();
  t.ok(after.uncompressedByteSize <= limit, `uncompressedByteSize ${after.uncompressedByteSize} within the limit ${Math.round(limit)}`);
  t.equal(await countAll(node, 'ingested'), 60);
  t.equal(await countOf(node.url, 'ingested', node.adminToken, 'batch=b0 or batch=b1 or batch=b2', ALL_TIME), 0);
  t.equal(await node.stop(), 0);
});

t.test("the node-wide default retention applies to repositories that set none of that kind", async (t) => {
  const node = await startNode(t, { config: [...BASE, '[retention]', 'interval_seconds = 1', 'default_time_days = 5', ''].join('\n') });
  const plain = await createRepo(node.url, node.adminToken, 'plain');
  const own = await createRepo(node.url, node.adminToken, 'own');
  await mustGql(node.url, node.adminToken, 'mutation { updateRetention(repositoryName: "own", timeBasedRetention: 15) { repository { name } } }');
  for (const r of [plain, own]) {
    await ingestStructured(node.url, r.ingestToken, events(10, 20 * DAY, 'ancient'));
    await ingestStructured(node.url, r.ingestToken, events(10, 10 * DAY, 'old'));
    await ingestStructured(node.url, r.ingestToken, events(10, HOUR, 'new'));
  }
  t.strictSame(await until('plain keeps what is newer than 5 days', () => batches(node, plain.id), (b) => b.join() === 'new'), ['new'], 'the default (5 days) deletes the 10- and 20-day-old batches');
  t.strictSame(await until('own keeps what is newer than 15 days', () => batches(node, own.id), (b) => b.join() === 'new,old'), ['new', 'old'], "the repository's own 15 days win over the default (the 20-day-old batch goes, the 10-day-old one stays)");
  t.equal(await countAll(node, 'plain'), 10);
  t.equal(await countAll(node, 'own'), 20);
  // The repository's own limit removed: the default applies to it too.
  await mustGql(node.url, node.adminToken, 'mutation { updateRetention(repositoryName: "own", timeBasedRetention: null) { repository { name } } }');
  t.strictSame(await until('own falls back to the default', () => batches(node, own.id), (b) => b.join() === 'new'), ['new']);
  t.equal(await node.stop(), 0);
});

const mounted = mountTmpfs(t, 96, 'logsvc-watermark-');
if (typeof mounted === 'string') {
  t.test(`disk watermark: ${mounted}`, { skip: mounted }, () => undefined);
} else {
  t.test('past the disk watermark the oldest segments of any repository go, oldest first, until the disk is below it', async (t) => {
    const WATERMARK = 60;
    const dataDir = join(mounted.dir, 'data');
    // The health checks' own disk thresholds are out of the way: this is the watermark's test.
    const config = ['[health]', 'grace_period_seconds = 600', 'disk_warn_percent = 100', 'disk_down_percent = 100', ...BASE.slice(2), '[retention]', 'interval_seconds = 1', `disk_watermark_percent = ${WATERMARK}`, ''].join('\n');
    const node = await startNode(t, { dataDir, config });
    const a = await createRepo(node.url, node.adminToken, 'wa');
    const b = await createRepo(node.url, node.adminToken, 'wb');
    // Incompressible events (random text), four batches of ~1.5 MB: the oldest in a, then b, a, b.
    const heavy = (ageMs: number, batch: string): KnownEvent[] => {
      const now = Date.now();
      return Array.from({ length: 300 }, (_, i) => ({ timestamp: now - ageMs + i, rawstring: `${batch} ${i} ${randomBytes(3600).toString('base64')}`, attributes: { batch }, tags: { batch } }));
    };
    const plan: [typeof a, string, number][] = [[a, 'a-oldest', 10 * DAY], [b, 'b-older', 9 * DAY], [a, 'a-mid', 8 * DAY], [b, 'b-new', HOUR]];
    for (const [repo, batch, age] of plan) await ingestStructured(node.url, repo.ingestToken, heavy(age, batch), 50);
    await until('every event searchable', async () => (await countAll(node, 'wa')) + (await countAll(node, 'wb')), (n) => n === 1200);
    const segs = async () => [...(await segmentsOf(dataDir, a.id)), ...(await segmentsOf(dataDir, b.id))];
    // Every event in a closed segment: the segments' events add up (open ones are never deleted).
    await until('the four batches in segments', async () => new Set((await segs()).map((s) => s.batch)).size, (n) => n === 4);
    // The disk's use settled: the digest queue's files are given back once their records are in
    // segments, at a time of the node's choosing; measured before that, the filler would fall
    // short of the watermark by what the queue gives back later.
    const usedBytes = async (): Promise<number> => {
      const d = await statfs(mounted.dir);
      return (d.blocks - d.bavail) * d.bsize;
    };
    let last = -1;
    await until('the disk use settled (unchanged over 2 s)', async () => {
      const a = await usedBytes();
      await sleep(2000);
      const b = await usedBytes();
      const settled = a === b && b === last;
      last = b;
      return settled;
    }, (settled) => settled, 120_000);
    const before = await segs();
    const disk = await statfs(mounted.dir);
    const total = disk.blocks * disk.bsize;
    const used = total - disk.bavail * disk.bsize;
    t.ok(used / total < WATERMARK / 100, `below the watermark before the filler: ${((used / total) * 100).toFixed(1)} %`);
    // Fill to the watermark plus the two oldest batches and half of the third: that much must go.
    const bytesOf = (batch: string) => before.filter((s) => s.batch === batch).reduce((n, s) => n + s.bytes, 0);
    const need = bytesOf('a-oldest') + bytesOf('b-older') + bytesOf('a-mid') / 2;
    const filler = Math.ceil((total * WATERMARK) / 100 - used + need);
    const fh = await open(join(mounted.dir, 'filler'), 'w');
    const chunk = Buffer.alloc(1024 * 1024, 1);
    for (let left = filler; left > 0; left -= chunk.length) await fh.write(chunk.subarray(0, Math.min(chunk.length, left)));
    await fh.sync();
    await fh.close();

    const after = await until('the oldest batches of both repositories gone', segs, (s) => !s.some((x) => x.batch === 'a-oldest' || x.batch === 'b-older'));
    const gone = before.filter((x) => !after.some((y) => y.file === x.file));
    const kept = after.filter((x) => before.some((y) => y.file === x.file));
    t.ok(gone.length > 0 && kept.length > 0, `${gone.length} segments deleted, ${kept.length} kept`);
    t.ok(Math.max(...gone.map((x) => x.maxTs)) <= Math.min(...kept.map((x) => x.maxTs)), 'every deleted segment is older than every kept one');
    t.ok(kept.some((x) => x.batch === 'b-new'), 'the newest batch stays');
    t.equal(await countOf(node.url, 'wb', node.adminToken, 'batch=b-new', ALL_TIME), 300, 'all of it');
    t.equal(await countOf(node.url, 'wa', node.adminToken, 'batch=a-oldest', ALL_TIME), 0, 'a lost its oldest batch');
    t.equal(await countOf(node.url, 'wb', node.adminToken, 'batch=b-older', ALL_TIME), 0, 'b lost its older batch');
    const now = await statfs(mounted.dir);
    const usedNow = ((now.blocks - now.bavail) / now.blocks) * 100;
    t.ok(usedNow <= WATERMARK + 0.5, `the disk is at the watermark or below: ${usedNow.toFixed(1)} %`);
    t.equal(await node.stop(), 0);
  });
}
