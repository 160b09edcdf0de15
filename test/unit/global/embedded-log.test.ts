import t, { type Test } from 'tap';
import { copyFile, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GLOBAL_LOG_FORMAT_VERSION, GlobalStore, type GlobalEvent, type LoadedLog } from '../../../src/global/index.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { crc32c, scanFrames } from '../../../src/storage/index.js';
import { MAX_FRAME_PAYLOAD } from '../../../src/storage/frames.js';
import { ALL_EVENTS, nodeEvent, tempDir } from './fixtures.js';

const LOG1 = 'events-000000000001.log';
const HEADER = Buffer.from([0x4c, 0x53, 0x47, 0x45, 1, 0, 0, 0]);

const recordFor = (seq: number): { seq: number; event: GlobalEvent } => ({ seq, event: ALL_EVENTS[(seq - 1) % ALL_EVENTS.length]! });

/** Writes events 1..n through a real EmbeddedGlobalLog; returns the log file's bytes and frame offsets. */
async function writeLog(dir: string, n: number): Promise<{ bytes: Buffer; starts: number[] }> {
  const log = new EmbeddedGlobalLog(dir);
  const loaded = await log.open();
  if (loaded.events.length !== 0) throw new Error('expected an empty dir');
  for (let seq = 1; seq <= n; seq++) await log.append(seq, recordFor(seq).event);
  await log.close();
  const bytes = await readFile(join(dir, LOG1));
  const scan = scanFrames(bytes, 8);
  if (scan.frames.length !== n || scan.stop !== undefined) throw new Error('unexpected scan');
  return { bytes, starts: scan.frames.map((f) => f.offset) };
}

async function damagedFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.includes('.damaged-'));
}

const expectRecords = (n: number): { seq: number; event: GlobalEvent }[] => Array.from({ length: n }, (_, i) => recordFor(i + 1));

t.test('format constants and a fresh log file', async (t) => {
  t.equal(GLOBAL_LOG_FORMAT_VERSION, 1);
  const dir = await tempDir(t);
  const log = new EmbeddedGlobalLog(join(dir, 'nested', 'global'));
  const loaded = await log.open();
  t.strictSame(loaded, { snapshot: null, events: [], repairs: [] });
  await log.close();
  t.same([...(await readFile(join(dir, 'nested', 'global', LOG1)))], [...HEADER]);
});

t.test('appended records round trip through open', async (t) => {
  const dir = await tempDir(t);
  const { bytes, starts } = await writeLog(dir, 30);
  t.ok(bytes.subarray(0, 8).equals(HEADER), 'header');
  t.equal(starts[0], 8);
  const log = new EmbeddedGlobalLog(dir);
  const loaded = await log.open();
  t.strictSame(loaded, { snapshot: null, events: expectRecords(30), repairs: [] });
  await log.append(31, nodeEvent(31));
  await log.close();
  const again = new EmbeddedGlobalLog(dir);
  const l2 = await again.open();
  t.equal(l2.events.length, 31);
  t.strictSame(l2.events[30], { seq: 31, event: nodeEvent(31) });
  await again.close();
});

t.test('append after close, and after a failed write, is refused', async (t) => {
  const dir = await tempDir(t);
  const log = new EmbeddedGlobalLog(dir);
  await log.open();
  await log.append(1, nodeEvent(1));
  // close the file behind the log's back so the next write fails
  await (log as unknown as { fh: FileHandle }).fh.close();
  const err = await log.append(2, nodeEvent(2)).then(
    () => null,
    (e: unknown) => e,
  );
  t.match(err, { code: 'E_STATE_WRITE_FAILED', retriable: true, httpStatus: 503, message: /^global log append of event 2 failed: / });
  const err2 = await log.append(3, nodeEvent(3)).then(
    () => null,
    (e: unknown) => e,
  );
  t.equal(err2, err, 'every later append gets the same failure');
  const closed = new EmbeddedGlobalLog(dir);
  await t.rejects(closed.append(1, nodeEvent(1)), { code: 'E_STATE_WRITE_FAILED', message: 'global log is not open' });
  await closed.open();
  await closed.close();
  await t.rejects(closed.append(2, nodeEvent(2)), { code: 'E_STATE_WRITE_FAILED', message: 'global log is not open' });
});

async function checkCut(
  t: Tap,
  original: Buffer,
  starts: number[],
  cut: number,
): Promise<void> {

  const dir = await tempDir(t, 'logsvc-cut-');
  await writeFile(join(dir, LOG1), original.subarray(0, cut));
  const log = new EmbeddedGlobalLog(dir);
  const loaded = await log.open();
  const label = `cut at ${cut}`;
  const ends = [...starts.slice(1), original.length];
  const kept = ends.filter((e) => e <= cut).length;
  if (cut < 8) {
    t.strictSame(loaded.events, [], `${label}: no events`);
    t.strictSame(loaded.repairs, [`global log ${LOG1} had an incomplete header; rewritten empty`], `${label}: repair`);
    t.ok((await readFile(join(dir, LOG1))).equals(HEADER), `${label}: header rewritten`);
  } else {
    t.strictSame(loaded.events, expectRecords(kept), `${label}: the ${kept} complete records are kept`);
    const boundary = cut === 8 || ends.includes(cut);
    const validEnd = kept === 0 ? 8 : ends[kept - 1]!;
    t.equal((await stat(join(dir, LOG1))).size, validEnd, `${label}: file truncated to the last good frame`);
    const aside = await damagedFiles(dir);
    if (boundary) {
      t.strictSame(loaded.repairs, [], `${label}: a cut on a frame boundary needs no repair`);
      t.strictSame(aside, []);
    } else {
      const reason = cut - validEnd < 8 ? 'truncated-header' : 'truncated-payload';
      t.equal(aside.length, 1, `${label}: one side file`);
      const asidePath = join(dir, aside[0]!);
      t.match(aside[0], /^events-000000000001\.log\.damaged-\d+$/);
      t.strictSame(
        loaded.repairs,
        [`global log ${LOG1}: ${reason} at offset ${validEnd}; kept ${kept} events before it, moved ${cut - validEnd} damaged bytes to ${asidePath}`],
        `${label}: repair reported`,
      );
      t.ok((await readFile(asidePath)).equals(original.subarray(validEnd, cut)), `${label}: side file holds the cut-off bytes`);
    }
  }
  // appends after the repair land after the last good frame and survive another reopen
  const next = (cut < 8 ? 0 : kept) + 1;
  await log.append(next, nodeEvent(1000 + next));
  await log.close();
  const again = new EmbeddedGlobalLog(dir);
  const l2 = await again.open();
  t.strictSame(l2.repairs, [], `${label}: clean after the repair`);
  t.strictSame(l2.events, [...expectRecords(next - 1), { seq: next, event: nodeEvent(1000 + next) }], `${label}: new append survives reopen`);
  await again.close();
  await rm(dir, { recursive: true, force: true });

}
type Tap = Test;

t.test('torn tail: every cut inside the last record', async (t) => {
  const dir = await tempDir(t);
  const { bytes, starts } = await writeLog(dir, 12);
  const last = starts.at(-1)!;
  t.ok(bytes.length - last > 16, 'the last record is long enough to be interesting');
  for (let cut = last + 1; cut < bytes.length; cut++) await checkCut(t, bytes, starts, cut);
});

t.test('torn tail: a sample of cuts across the whole file', async (t) => {
  const dir = await tempDir(t);
  const { bytes, starts } = await writeLog(dir, 12);
  const cuts = new Set<number>([0, 1, 4, 7, 8, 9, 15, 16, ...starts, ...starts.map((s) => s + 3), ...starts.map((s) => s + 8)]);
  for (let c = 0; c < bytes.length; c += 37) cuts.add(c);
  for (const cut of [...cuts].filter((c) => c < bytes.length).sort((a, b) => a - b)) await checkCut(t, bytes, starts, cut);
});

t.test('a bit flip anywhere in the last record: never misread, earlier records kept, bytes kept aside', async (t) => {
  const dir = await tempDir(t);
  const { bytes, starts } = await writeLog(dir, 8);
  const last = starts.at(-1)!;
  let tried = 0;
  for (let off = last; off < bytes.length; off++) {
    const bits = off < last + 8 || off % 5 === 0 ? [0, 1, 2, 3, 4, 5, 6, 7] : [off % 8];
    for (const bit of bits) {
      tried++;
      const damaged = Buffer.from(bytes);
      damaged[off]! ^= 1 << bit;
      const d = await tempDir(t, 'logsvc-flip-');
      await writeFile(join(d, LOG1), damaged);
      const log = new EmbeddedGlobalLog(d);
      const loaded: LoadedLog = await log.open();
      const label = `flip ${off}.${bit}`;
      t.strictSame(loaded.events, expectRecords(7), `${label}: exactly the 7 earlier records`);
      const len = damaged.readUInt32LE(last);
      const reason =
        len > MAX_FRAME_PAYLOAD ? 'implausible-length' : last + 8 + len > damaged.length ? 'truncated-payload' : 'checksum-mismatch';
      t.equal(loaded.repairs.length, 1, `${label}: one repair`);
      t.match(loaded.repairs[0], new RegExp(`^global log ${LOG1.replace(/\./g, '\\.')}: ${reason} at offset ${last}; kept 7 events before it, moved ${damaged.length - last} damaged bytes to `), `${label}: repair names ${reason}`);
      t.equal((await stat(join(d, LOG1))).size, last, `${label}: truncated`);
      const aside = await damagedFiles(d);
      t.equal(aside.length, 1, `${label}: side file`);
      t.ok((await readFile(join(d, aside[0]!))).equals(damaged.subarray(last)), `${label}: side file holds the removed bytes`);
      await log.close();
      await rm(d, { recursive: true, force: true });
    }
  }
  t.ok(tried > 100, `${tried} flips tried`);
});

t.test('a bit flip in an earlier record of the newest log never yields a misread record', async (t) => {
  const dir = await tempDir(t);
  const { bytes, starts } = await writeLog(dir, 8);
  for (const k of [0, 3, 6]) {
    const off = starts[k]! + 8 + 2; // inside the payload of record k+1
    const damaged = Buffer.from(bytes);
    damaged[off]! ^= 0x04;
    const d = await tempDir(t, 'logsvc-flip-');
    await writeFile(join(d, LOG1), damaged);
    const log = new EmbeddedGlobalLog(d);
    let loaded: LoadedLog | null = null;
    try {
      loaded = await log.open();
    } catch (err) {
      t.match(err, { code: 'E_STATE_CORRUPT' }, `record ${k + 1}: refused`);
    }
    if (loaded !== null) {
      // Whatever is kept must be exactly the records before the damage; the rest is set aside intact.
      t.strictSame(loaded.events, expectRecords(k), `record ${k + 1}: only records before the damage`);
      const aside = await damagedFiles(d);
      t.equal(aside.length, 1);
      t.ok((await readFile(join(d, aside[0]!))).equals(damaged.subarray(starts[k]!)), 'every removed byte is kept aside');
      await log.close();
    }
  }
});

t.test('wrong magic or an unsupported version in a log header is E_STATE_CORRUPT naming the file', async (t) => {
  const dir = await tempDir(t);
  const { bytes } = await writeLog(dir, 3);
  const cases: [string, (b: Buffer) => void, RegExp][] = [
    ['magic', (b) => b.write('LSGX', 0, 'latin1'), /^global state file events-000000000001\.log: bad header$/],
    ['snapshot magic in a log', (b) => b.write('LSGS', 0, 'latin1'), /^global state file events-000000000001\.log: bad header$/],
    ['version 2', (b) => b.writeUInt32LE(2, 4), /^global state file events-000000000001\.log: format version 2 is not supported \(expected 1\)$/],
    ['version 0', (b) => b.writeUInt32LE(0, 4), /^global state file events-000000000001\.log: format version 0 is not supported \(expected 1\)$/],
  ];
  for (const [name, mutate, message] of cases) {
    const d = await tempDir(t);
    const b = Buffer.from(bytes);
    mutate(b);
    await writeFile(join(d, LOG1), b);
    await t.rejects(new EmbeddedGlobalLog(d).open(), { code: 'E_STATE_CORRUPT', message }, name);
    t.ok((await readFile(join(d, LOG1))).equals(b), `${name}: the file is left untouched`);
    t.strictSame(await damagedFiles(d), []);
  }
});

/** 7 events with snapshotEvery 3: snapshots at 3 and 6; logs events-4 (4..6) and events-7 (7). */
async function twoSnapshotDir(t: Tap): Promise<string> {
  const dir = await tempDir(t);
  const store = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
  for (let i = 1; i <= 7; i++) await store.transact(() => ({ events: [nodeEvent(i)], result: null }));
  await store.close();
  t.strictSame((await readdir(dir)).sort(), ['events-000000000004.log', 'events-000000000007.log', 'snapshot-000000000003.bin', 'snapshot-000000000006.bin']);
  return dir;
}

async function flipByte(path: string, offsetFromEnd: number): Promise<void> {
  const b = await readFile(path);
  b[b.length - offsetFromEnd]! ^= 0x01;
  await writeFile(path, b);
}

t.test('damage in a log file that is not the newest stops with E_STATE_CORRUPT', async (t) => {
  {
    const dir = await twoSnapshotDir(t);
    await flipByte(join(dir, 'events-000000000004.log'), 2);
    await t.rejects(new EmbeddedGlobalLog(dir).open(), {
      code: 'E_STATE_CORRUPT',
      message: /^global log events-000000000004\.log: checksum-mismatch at offset \d+, and later log files depend on it$/,
    }, 'flipped bit');
  }
  {
    const dir = await twoSnapshotDir(t);
    const p = join(dir, 'events-000000000004.log');
    await writeFile(p, (await readFile(p)).subarray(0, -1));
    await t.rejects(new EmbeddedGlobalLog(dir).open(), {
      code: 'E_STATE_CORRUPT',
      message: /^global log events-000000000004\.log: truncated-payload at offset \d+, and later log files depend on it$/,
    }, 'torn');
  }
  {
    const dir = await twoSnapshotDir(t);
    const p = join(dir, 'events-000000000004.log');
    await writeFile(p, (await readFile(p)).subarray(0, 5));
    await t.rejects(new EmbeddedGlobalLog(dir).open(), { code: 'E_STATE_CORRUPT', message: /^global state file events-000000000004\.log: bad header$/ }, 'incomplete header in an older log');
  }
  {
    // the older log is needed: the newest snapshot is damaged too
    const dir = await twoSnapshotDir(t);
    await flipByte(join(dir, 'events-000000000004.log'), 2);
    await flipByte(join(dir, 'snapshot-000000000006.bin'), 3);
    await t.rejects(new EmbeddedGlobalLog(dir).open(), { code: 'E_STATE_CORRUPT', message: /events-000000000004\.log: checksum-mismatch/ }, 'needed log damaged');
  }
  {
    // a needed log file is missing: the sequence gap is detected
    const dir = await twoSnapshotDir(t);
    await unlink(join(dir, 'events-000000000004.log'));
    await flipByte(join(dir, 'snapshot-000000000006.bin'), 3);
    await t.rejects(new EmbeddedGlobalLog(dir).open(), {
      code: 'E_STATE_CORRUPT',
      message: 'global log events-000000000007.log: expected event 4 at offset 8, found 7',
    }, 'gap');
  }
});

t.test('a damaged newest snapshot falls back to the older one, and the logs complete the state', async (t) => {
  const damages: [string, (b: Buffer) => Buffer, string][] = [
    ['flipped payload bit', (b) => ((b[b.length - 4]! ^= 0x20), b), 'checksum-mismatch'],
    ['flipped crc bit', (b) => ((b[13]! ^= 0x80), b), 'checksum-mismatch'],
    ['truncated', (b) => b.subarray(0, b.length - 10), 'truncated-payload'],
    ['truncated frame header', (b) => b.subarray(0, 12), 'truncated-header'],
    ['header only', (b) => b.subarray(0, 8), 'no snapshot record'],
    ['two records', (b) => Buffer.concat([b, b.subarray(8)]), 'no snapshot record'],
    ['bad magic', (b) => (b.write('LSGE', 0, 'latin1'), b), 'global state file snapshot-000000000006.bin: bad header'],
    ['version 9', (b) => (b.writeUInt32LE(9, 4), b), 'global state file snapshot-000000000006.bin: format version 9 is not supported (expected 1)'],
    ['empty file', () => Buffer.alloc(0), 'global state file snapshot-000000000006.bin: bad header'],
  ];
  for (const [name, damage, why] of damages) {
    const dir = await twoSnapshotDir(t);
    const ref = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
    const expected = ref.state.toSnapshot();
    await ref.close();
    t.equal(expected.seq, 7);
    const p = join(dir, 'snapshot-000000000006.bin');
    await writeFile(p, damage(await readFile(p)));

    const log = new EmbeddedGlobalLog(dir);
    const loaded = await log.open();
    t.equal(loaded.snapshot?.seq, 3, `${name}: the older snapshot is used`);
    t.strictSame(
      loaded.events.map((e) => e.seq),
      [4, 5, 6, 7],
      `${name}: events after it are replayed`,
    );
    t.strictSame(loaded.repairs, [`snapshot snapshot-000000000006.bin is damaged (${why}); using an older one`], `${name}: repair`);
    await log.close();

    const store = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
    t.strictSame(store.state.toSnapshot(), expected, `${name}: complete state`);
    await store.transact(() => ({ events: [nodeEvent(8)], result: null }));
    await store.close();
    const again = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
    t.equal(again.state.seq, 8, `${name}: appends continue`);
    t.strictSame([...again.state.nodes.keys()], [1, 2, 3, 4, 5, 6, 7, 8]);
    await again.close();
  }
});

t.test('every snapshot damaged is E_STATE_CORRUPT', async (t) => {
  const dir = await twoSnapshotDir(t);
  await flipByte(join(dir, 'snapshot-000000000006.bin'), 3);
  await flipByte(join(dir, 'snapshot-000000000003.bin'), 3);
  await t.rejects(new EmbeddedGlobalLog(dir).open(), { code: 'E_STATE_CORRUPT', message: `global state: every snapshot in ${dir} is damaged` });

  const one = await tempDir(t);
  const store = await GlobalStore.open(new EmbeddedGlobalLog(one), { snapshotEvery: 3, logger: silentLogger });
  for (let i = 1; i <= 4; i++) await store.transact(() => ({ events: [nodeEvent(i)], result: null }));
  await store.close();
  await flipByte(join(one, 'snapshot-000000000003.bin'), 1);
  await t.rejects(new EmbeddedGlobalLog(one).open(), { code: 'E_STATE_CORRUPT', message: /every snapshot in .* is damaged/ }, 'a single damaged snapshot');
});

t.test('events already covered by a snapshot are skipped (crash after the snapshot, before the new log)', async (t) => {
  const src = await tempDir(t);
  const store = await GlobalStore.open(new EmbeddedGlobalLog(src), { snapshotEvery: 3, logger: silentLogger });
  for (let i = 1; i <= 3; i++) await store.transact(() => ({ events: [nodeEvent(i)], result: null }));
  const snap = store.state.toSnapshot();
  await store.close();

  const dir = await tempDir(t);
  const log = new EmbeddedGlobalLog(dir);
  await log.open();
  for (let i = 1; i <= 5; i++) await log.append(i, nodeEvent(i));
  await log.close();
  await copyFile(join(src, 'snapshot-000000000003.bin'), join(dir, 'snapshot-000000000003.bin'));

  const l2 = new EmbeddedGlobalLog(dir);
  const loaded = await l2.open();
  t.strictSame(loaded.snapshot, snap);
  t.strictSame(loaded.events, [
    { seq: 4, event: nodeEvent(4) },
    { seq: 5, event: nodeEvent(5) },
  ]);
  t.strictSame(loaded.repairs, []);
  await l2.append(6, nodeEvent(6));
  await l2.close();
  const l3 = new EmbeddedGlobalLog(dir);
  t.strictSame(
    (await l3.open()).events.map((e) => e.seq),
    [4, 5, 6],
  );
  await l3.close();
});

t.test('a sequence gap inside one log is E_STATE_CORRUPT', async (t) => {
  const dir = await tempDir(t);
  const log = new EmbeddedGlobalLog(dir);
  await log.open();
  await log.append(1, nodeEvent(1));
  await log.append(2, nodeEvent(2));
  await log.append(4, nodeEvent(4));
  await log.close();
  const bytes = await readFile(join(dir, LOG1));
  const third = scanFrames(bytes, 8).frames[2]!.offset;
  await t.rejects(new EmbeddedGlobalLog(dir).open(), { code: 'E_STATE_CORRUPT', message: `global log ${LOG1}: expected event 3 at offset ${third}, found 4` });
  t.equal(crc32c(bytes), crc32c(await readFile(join(dir, LOG1))), 'the file is left untouched');
});

t.test('a torn tail in the newest log after snapshots is repaired; older files are untouched', async (t) => {
  const dir = await twoSnapshotDir(t);
  const store = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
  await store.transact(() => ({ events: [nodeEvent(8)], result: null }));
  await store.close();
  const p = join(dir, 'events-000000000007.log');
  const full = await readFile(p);
  const starts = scanFrames(full, 8).frames.map((f) => f.offset);
  t.equal(starts.length, 2, 'events 7 and 8');
  const older = await readFile(join(dir, 'events-000000000004.log'));
  const cut = full.length - 3;
  await writeFile(p, full.subarray(0, cut));

  const log = new EmbeddedGlobalLog(dir);
  const loaded = await log.open();
  t.equal(loaded.snapshot?.seq, 6);
  t.strictSame(loaded.events, [{ seq: 7, event: nodeEvent(7) }]);
  t.equal(loaded.repairs.length, 1);
  t.match(loaded.repairs[0], /^global log events-000000000007\.log: truncated-payload at offset \d+; kept 1 events before it, moved \d+ damaged bytes to .*events-000000000007\.log\.damaged-\d+$/);
  t.equal((await stat(p)).size, starts[1]);
  t.ok((await readFile(join(dir, 'events-000000000004.log'))).equals(older), 'the older log is untouched');
  await log.append(8, nodeEvent(80));
  await log.close();

  const again = await GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery: 3, logger: silentLogger });
  t.equal(again.state.seq, 8);
  t.equal(again.state.nodes.get(80)?.name, 'node-80', 'the re-appended event 8 is the new one');
  t.equal(again.state.nodes.has(8), false, 'the torn event 8 is gone');
  await again.close();
});
