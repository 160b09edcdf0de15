import t from 'tap';
import { readFile, truncate, writeFile, mkdir, rm, cp } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedDigestQueue } from '../../../src/queue/index.js';
import { silentLogger, type Logger } from '../../../src/lib/logger.js';
import { damagedFiles, fileName, openQueue, partDir, payload, queueFiles, readAll, tempDir } from './helpers.js';

/** Writes `n` records through a real queue (one file, or several with `fileBytes`); returns offsets. */
async function populate(dir: string, n: number, fileBytes?: number, len?: (i: number) => number): Promise<{ offsets: number[]; payloads: Buffer[]; end: number }> {
  const { q } = await openQueue(dir, 1, fileBytes);
  const offsets: number[] = [];
  const payloads: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const p = payload(i, len?.(i));
    payloads.push(p);
    offsets.push(await q.append(0, p));
  }
  const end = q.endOffset(0);
  await q.close();
  return { offsets, payloads, end };
}

function recordingLogger(): { logger: Logger; errors: { msg: string; fields: Record<string, unknown> | undefined }[] } {
  const errors: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
  return { logger: { ...silentLogger, error: (msg, fields) => errors.push({ msg, fields }) }, errors };
}

t.test('torn tail: a cut at every byte inside the last record', async (t) => {
  const root = await tempDir(t);
  const pristine = join(root, 'pristine');
  const n = 6;
  const { offsets, payloads, end } = await populate(pristine, n, undefined, (i) => (i === n - 1 ? 45 : 30));
  const lastStart = offsets[n - 1]!; // stream offset = file position - 8
  const file = fileName(0);
  const pristineBytes = await readFile(join(partDir(pristine, 0), file));
  t.equal(pristineBytes.length, 8 + end);
  let cases = 0;
  for (let cut = lastStart + 1; cut < end; cut++) {
    const dir = join(root, `cut-${cut}`);
    await cp(pristine, dir, { recursive: true });
    await truncate(join(partDir(dir, 0), file), 8 + cut);
    const { logger, errors } = recordingLogger();
    const q = await EmbeddedDigestQueue.open({ dir, partitions: 1, logger, onFatal: () => undefined });
    const fail = (what: string): void => {
      t.fail(`cut at stream offset ${cut}: ${what}`);
    };
    if (q.endOffset(0) !== lastStart) fail(`endOffset ${q.endOffset(0)}, want ${lastStart}`);
    const back = await readAll(q, 0);
    if (JSON.stringify(back.map((r) => r.offset)) !== JSON.stringify(offsets.slice(0, n - 1))) fail(`records ${back.map((r) => r.offset).join(',')}`);
    if (!back.every((r, i) => r.payload.equals(payloads[i]!))) fail('payload differs');
    const onDisk = await readFile(join(partDir(dir, 0), file));
    if (onDisk.length !== 8 + lastStart) fail(`file length ${onDisk.length}, want ${8 + lastStart}`);
    const aside = await damagedFiles(dir);
    if (aside.length !== 1 || !aside[0]!.startsWith(`${file}.damaged-`)) fail(`aside files ${aside.join(',')}`);
    else {
      const kept = await readFile(join(partDir(dir, 0), aside[0]!));
      if (!kept.equals(pristineBytes.subarray(8 + lastStart, 8 + cut))) fail('the aside file does not hold the cut bytes');
    }
    if (errors.length !== 1 || !/damaged tail/.test(errors[0]!.msg) || errors[0]!.fields?.['at'] !== 8 + lastStart) fail(`logged ${JSON.stringify(errors)}`);
    // New appends continue at the cut and read back.
    const p = Buffer.from(`after cut ${cut}`);
    const off = await q.append(0, p);
    if (off !== lastStart) fail(`new append at ${off}`);
    const again = await readAll(q, 0);
    if (again.length !== n || again.at(-1)!.offset !== lastStart || !again.at(-1)!.payload.equals(p)) fail('new record not read back');
    await q.close();
    // And a second reopen finds nothing more to repair.
    const { logger: l2, errors: e2 } = recordingLogger();
    const q2 = await EmbeddedDigestQueue.open({ dir, partitions: 1, logger: l2, onFatal: () => undefined });
    if (e2.length !== 0 || q2.endOffset(0) !== lastStart + 16 + p.length || (await readAll(q2, 0)).length !== n) fail('second reopen not clean');
    await q2.close();
    await rm(dir, { recursive: true, force: true });
    cases++;
  }
  t.equal(cases, end - lastStart - 1, 'every cut position inside the last record was checked');
});

t.test('torn tail in the newest of several files; a newest file cut inside its header', async (t) => {
  const dir = await tempDir(t);
  const { offsets, end } = await populate(dir, 25, 1024, () => 100); // frame 116: 9 per file
  const files = await queueFiles(dir);
  t.strictSame(files, [0, 1044, 2088].map(fileName));
  // Cut the newest file in the middle of its last record.
  await truncate(join(partDir(dir, 0), files[2]!), 8 + (end - 2088) - 50);
  let { q } = await openQueue(dir, 1, 1024);
  t.equal(q.endOffset(0), offsets[24]);
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), offsets.slice(0, 24));
  t.equal((await damagedFiles(dir)).length, 1);
  await q.close();

  // A newest file shorter than its header (a crash right after creating it) is rewritten empty.
  await writeFile(join(partDir(dir, 0), fileName(offsets[24]!)), Buffer.from('LSD'));
  ({ q } = await openQueue(dir, 1, 1024));
  t.equal(q.endOffset(0), offsets[24]);
  t.strictSame([...(await readFile(join(partDir(dir, 0), fileName(offsets[24]!))))], [0x4c, 0x53, 0x44, 0x51, 1, 0, 0, 0]);
  t.equal(await q.append(0, payload(99, 100)), offsets[24]);
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), offsets.slice(0, 25));
  await q.close();
});

t.test('bit flips inside a middle record: reads skip exactly that record (resynchronisation)', async (t) => {
  const root = await tempDir(t);
  const pristine = join(root, 'pristine');
  const n = 9;
  const victim = 4;
  const { offsets, payloads, end } = await populate(pristine, n, undefined, () => 60);
  const file = fileName(0);
  const bytes = await readFile(join(partDir(pristine, 0), file));
  const from = 8 + offsets[victim]!;
  const to = 8 + offsets[victim + 1]!;
  const want = offsets.filter((_, i) => i !== victim);
  let cases = 0;
  // Every byte of the frame header and a sample of the payload, with varying bits.
  const positions: number[] = [];
  for (let pos = from; pos < to; pos += pos < from + 20 ? 1 : 5) positions.push(pos);
  positions.push(to - 1);
  for (const pos of positions) {
    const dir = join(root, `flip-${pos}`);
    await mkdir(partDir(dir, 0), { recursive: true });
    const b = Buffer.from(bytes);
    b[pos]! ^= 1 << (pos % 8);
    await writeFile(join(partDir(dir, 0), file), b);
    const { logger, errors } = recordingLogger();
    const q = await EmbeddedDigestQueue.open({ dir, partitions: 1, logger, onFatal: () => undefined });
    const fail = (what: string): void => {
      t.fail(`flip at file position ${pos}: ${what}`);
    };
    const back = await readAll(q, 0);
    if (JSON.stringify(back.map((r) => r.offset)) !== JSON.stringify(want)) fail(`records ${back.map((r) => r.offset).join(',')}`);
    if (!back.every((r) => r.payload.equals(payloads[offsets.indexOf(r.offset)]!))) fail('payload differs');
    if (q.endOffset(0) !== end) fail(`endOffset ${q.endOffset(0)}`);
    if ((await readFile(join(partDir(dir, 0), file))).length !== b.length) fail('file was cut');
    if ((await damagedFiles(dir)).length !== 0) fail('bytes set aside for a non-tail damage');
    if (errors.length !== 1 || errors[0]!.fields?.['from'] !== from || errors[0]!.fields?.['to'] !== to) fail(`logged ${JSON.stringify(errors)}`);
    const fromVictim = await readAll(q, 0, offsets[victim]!);
    if (JSON.stringify(fromVictim.map((r) => r.offset)) !== JSON.stringify(offsets.slice(victim + 1))) fail('read from the damaged offset');
    const off = await q.append(0, Buffer.from('next'));
    if (off !== end) fail(`append at ${off}`);
    if ((await readAll(q, 0)).length !== n) fail('after append');
    await q.close();
    await rm(dir, { recursive: true, force: true });
    cases++;
  }
  t.equal(cases, positions.length, `${positions.length} flipped positions checked`);
});

t.test('a wrong header magic is E_STATE_CORRUPT', async (t) => {
  const dir = await tempDir(t);
  await populate(dir, 3);
  const path = join(partDir(dir, 0), fileName(0));
  const b = await readFile(path);
  b.write('XSDQ', 0, 'latin1');
  await writeFile(path, b);
  await t.rejects(openQueue(dir), { code: 'E_STATE_CORRUPT', message: /bad header/ });
  t.ok((await readFile(path)).equals(b), 'the file is left as it was');
});

t.test('a wrong header magic in an older file is E_STATE_CORRUPT too', async (t) => {
  const dir = await tempDir(t);
  await populate(dir, 20, 512, () => 100);
  const files = await queueFiles(dir);
  t.ok(files.length >= 3);
  const path = join(partDir(dir, 0), files[1]!);
  const b = await readFile(path);
  b[2] = 0;
  await writeFile(path, b);
  await t.rejects(openQueue(dir, 1, 512), { code: 'E_STATE_CORRUPT', message: /bad header/ });
  // An older file shorter than a header is corrupt as well (only the newest may be torn).
  b[2] = 0x44;
  await writeFile(path, b.subarray(0, 5));
  await t.rejects(openQueue(dir, 1, 512), { code: 'E_STATE_CORRUPT', message: /bad header/ });
});

t.test('an unsupported format version is E_STATE_CORRUPT', async (t) => {
  const dir = await tempDir(t);
  await populate(dir, 2);
  const path = join(partDir(dir, 0), fileName(0));
  const b = await readFile(path);
  b.writeUInt32LE(2, 4);
  await writeFile(path, b);
  await t.rejects(openQueue(dir), { code: 'E_STATE_CORRUPT', message: /unsupported format version 2/ });
});
