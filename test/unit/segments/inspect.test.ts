import t, { type Test } from 'tap';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { inspectSegment, verifyDataDir } from '../../../src/segments/inspect.js';
import { parseSegment } from '../../../src/segments/segment-file.js';
import { eventId } from '../../../src/events/index.js';
import { EmbeddedDigestQueue } from '../../../src/queue/index.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from './helpers.js';

async function snapshotTree(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(relative(dir, p), await readFile(p));
    }
  };
  await walk(dir);
  return out;
}

function sameTree(t: Test, before: Map<string, Buffer>, after: Map<string, Buffer>, what: string): void {
  t.strictSame([...after.keys()].sort(), [...before.keys()].sort(), `${what}: same files`);
  let changed = 0;
  for (const [k, v] of before) if (!after.get(k)?.equals(v)) changed++;
  t.equal(changed, 0, `${what}: no file modified`);
}

/** A data dir with segments (closed) and a two-partition queue. */
async function buildDataDir(root: string): Promise<{ segPaths: string[]; queueRecords: number }> {
  const segs = join(root, 'segments');
  const s1 = await writeSegment(join(segs, 'sandbox', 'dsA'), segMeta('s1'), [makeEvents(10, 0), makeEvents(10, 1000, 10), makeEvents(10, 2000, 20)], true);
  const s2 = await writeSegment(join(segs, 'sandbox', 'dsB'), segMeta('s2', { ds: 'dsB' }), [makeEvents(5, 0)], true);
  const q = await EmbeddedDigestQueue.open({ dir: join(root, 'queue'), partitions: 2, logger: silentLogger, fileBytes: 512, onFatal: () => undefined });
  let n = 0;
  for (let i = 0; i < 30; i++) {
    await q.append(i % 2, Buffer.from(`record ${i} `.repeat(5)));
    n++;
  }
  await q.close();
  return { segPaths: [s1.path, s2.path], queueRecords: n };
}

t.test('inspectSegment renders the header, the blocks and one JSON line per event', async (t) => {
  const dir = await tempDir(t);
  const meta = segMeta('seg-inspect', { partition: 7, tags: { host: 'web1', type: 'accesslog' } });
  const blocks = [makeEvents(4, 300), makeEvents(2, 900, 4)];
  const w = await writeSegment(dir, meta, blocks, true, Date.UTC(2024, 0, 2, 3, 4, 5));
  const buf = await readFile(w.path);
  const seg = parseSegment(buf, w.path);
  const lines = await inspectSegment(w.path, { events: true });
  t.strictSame(lines.slice(0, 6), [
    'segment seg-inspect',
    `  file: ${w.path} (${buf.length} bytes)`,
    '  repository: sandbox  datasource: dsA  partition: 7',
    '  tags: #host=web1 #type=accesslog',
    `  created: ${new Date(meta.createdAt).toISOString()}  state: closed 2024-01-02T03:04:05.000Z`,
    '  blocks: 2  events: 6',
  ]);
  const b0 = seg.blocks[0]!;
  t.equal(
    lines[6],
    `  block 0 @${b0.pos}: 4 events, ${new Date(b0.minTs).toISOString()}..${new Date(b0.maxTs).toISOString()}, queue 300/0..400/0, ${b0.uncompressedLength} -> ${b0.compressedLength} bytes, bloom ${b0.bloomLength} bytes, grams ${b0.gramLength} bytes, header ${b0.headerLength} bytes (column frames), crc ok`,
  );
  t.match(lines[7], /^ {2}block 1 @\d+: 2 events, .*queue 900\/0\.\.900\/1, /);
  const json = lines.filter((l) => l.startsWith('{'));
  t.equal(json.length, 6, 'one line per event');
  t.equal(lines.length, 8 + 6);
  const evs = blocks.flat();
  json.forEach((l, i) => {
    const o = JSON.parse(l) as Record<string, unknown>;
    const e = evs[i]!;
    t.equal(o['@id'], eventId(7, e.offset, e.index, e.timestamp), `event ${i} @id`);
    t.match(o['@id'], /^[0-9a-f]{24}_\d+_0_\d+$/);
    t.equal(o['@timestamp'], e.timestamp);
    t.equal(o['@timezone'], e.timezone);
    t.equal(o['@ingesttimestamp'], String(e.ingestTimestamp));
    t.equal(o['#repo'], 'sandbox');
    t.equal(o['#host'], 'web1');
    t.equal(o['#type'], 'accesslog');
    t.equal(o['@rawstring'], e.rawstring);
    for (const [k, v] of Object.entries(e.fields)) t.equal(o[k], v, `field ${k}`);
  });
  t.strictSame(JSON.parse(json[0]!)['@id'], '0007' + (300).toString(16).padStart(20, '0') + `_0_0_${Math.floor(evs[0]!.timestamp / 1000)}`);

  const noEvents = await inspectSegment(w.path, { events: false });
  t.strictSame(noEvents, lines.slice(0, 8), 'without events: header and block lines only');
});

t.test('inspectSegment of an open segment with no tags and of a damaged one', async (t) => {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('open-insp', { tags: {} }), [makeEvents(3, 0)], false);
  t.teardown(() => w.close(0));
  const lines = await inspectSegment(w.path, { events: false });
  t.equal(lines[3], '  tags: (none)');
  t.match(lines[4], /state: open \(no footer\)$/);
  t.equal(lines[5], '  blocks: 1  events: 3');

  const c = await writeSegment(dir, segMeta('dmg'), [makeEvents(3, 0), makeEvents(3, 500, 3), makeEvents(3, 900, 6)], true);
  const buf = await readFile(c.path);
  const seg = parseSegment(buf, 'x');
  buf[seg.blocks[1]!.pos + 70]! ^= 0x04;
  await writeFile(c.path, buf);
  const dl = await inspectSegment(c.path, { events: true });
  t.equal(dl[5], '  blocks: 2  events: 6');
  t.equal(dl[6], `  DAMAGE at ${seg.blocks[1]!.pos}..${seg.blocks[2]!.pos}: block checksum mismatch`);
  t.equal(dl.filter((l) => l.startsWith('{')).length, 6);
});

t.test('verifyDataDir: good files report no problem and change nothing', async (t) => {
  const root = await tempDir(t);
  const { queueRecords } = await buildDataDir(root);
  const before = await snapshotTree(root);
  const report = await verifyDataDir(root);
  t.strictSame(report.problems, []);
  t.equal(report.segments, 2);
  t.equal(report.blocks, 4);
  t.equal(report.queueRecords, queueRecords);
  const queueFileCount = [...before.keys()].filter((k) => k.startsWith('queue/') && k.endsWith('.dq')).length;
  t.ok(queueFileCount > 2, 'several queue files (roll-over)');
  t.equal(report.queueFiles, queueFileCount);
  sameTree(t, before, await snapshotTree(root), 'after verify');
});

t.test('verifyDataDir names the file and byte range of damage, and modifies nothing', async (t) => {
  const root = await tempDir(t);
  const { segPaths, queueRecords } = await buildDataDir(root);
  // A flipped bit in the middle block of s1.
  const s1 = segPaths[0]!;
  const sbuf = await readFile(s1);
  const seg = parseSegment(sbuf, s1);
  sbuf[seg.blocks[1]!.pos + 80]! ^= 0x20;
  await writeFile(s1, sbuf);
  // A flipped bit in the second record of the first file of queue partition 1.
  const qfile = join(root, 'queue', 'p0001', `${'0'.padStart(20, '0')}.dq`);
  const qbuf = await readFile(qfile);
  const recLen = 16 + Buffer.from('record 1 '.repeat(5)).length;
  const second = 8 + recLen;
  qbuf[second + 20]! ^= 0x01;
  await writeFile(qfile, qbuf);
  // An open segment (no footer).
  const open = await writeSegment(join(root, 'segments', 'sandbox', 'dsC'), segMeta('s3', { ds: 'dsC' }), [makeEvents(2, 0)], false);
  t.teardown(() => open.close(0));

  const before = await snapshotTree(root);
  const report = await verifyDataDir(root);
  t.strictSame(report.problems, [
    `${s1}: bytes ${seg.blocks[1]!.pos}..${seg.blocks[2]!.pos}: block checksum mismatch`,
    `${s1}: footer lists 3 blocks, 2 are intact`,
    `${open.path}: no valid footer (open segment, or footer damaged)`,
    `${qfile}: bytes ${second}..${second + recLen} hold no intact record`,
  ]);
  t.equal(report.segments, 3);
  t.equal(report.blocks, 2 + 1 + 1);
  t.equal(report.queueRecords, queueRecords - 1);
  sameTree(t, before, await snapshotTree(root), 'after verify of damaged files');
});

t.test('verifyDataDir on an empty data dir', async (t) => {
  const root = await tempDir(t);
  t.strictSame(await verifyDataDir(root), { segments: 0, blocks: 0, queueFiles: 0, queueRecords: 0, problems: [] });
});
