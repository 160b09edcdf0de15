import t, { type Test } from 'tap';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobStore, contentHash } from '../../../src/files/index.js';

const bytesOf = (s: string): Buffer => Buffer.from(s);

async function store(t: Test): Promise<BlobStore> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-blobs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const s = new BlobStore(dir);
  await s.open();
  return s;
}

t.test('hold writes once; sweep removes only unreferenced, unheld blobs and stray temp files', async (t) => {
  const s = await store(t);
  const a = bytesOf('a,b\n1,2\n');
  const ha = contentHash(a);
  await s.hold(ha, a);
  t.equal(await s.sweep(() => false), 0, 'a held blob is kept');
  s.release(ha);
  t.equal(await s.sweep(() => true), 0, 'a referenced blob is kept');
  t.strictSame(await s.read(ha), a);
  await writeFile(join(s.dir, `.${'f'.repeat(64)}.123.tmp`), 'x');
  t.equal(await s.sweep(() => false), 2, 'the unreferenced blob and the stray temp file go');
  t.strictSame(await readdir(s.dir), []);
});

// Review 5 finding 5: the sweep decides a blob is unreferenced and starts unlinking it; an upload
// of the same bytes then must not see the file, skip writing it, and lose it to the unlink.
t.test('an upload of the same bytes during a sweep keeps its blob', async (t) => {
  const s = await store(t);
  for (let i = 0; i < 100; i++) {
    const b = bytesOf(`k,v\n${i},x\n`);
    const h = contentHash(b);
    await s.hold(h, b);
    s.release(h);
    let upload: Promise<void> | null = null;
    // Called when the sweep decides; the upload starts right after that decision, while the
    // unlink is under way (a microtask runs before any I/O completes).
    const removed = await s.sweep((name) => {
      if (name !== h) return true;
      queueMicrotask(() => (upload = s.hold(h, b)));
      return false;
    });
    t.equal(removed, 1);
    t.ok(upload !== null);
    await upload;
    // The upload holds the blob until its global event refers to it; the sweep after that sees it referenced.
    const got = await s.read(h).catch((err: NodeJS.ErrnoException) => err.code);
    if (!Buffer.isBuffer(got) || !got.equals(b)) {
      t.fail(`round ${i}: the blob of an acknowledged upload is gone (${String(got)})`);
      return;
    }
    t.equal(await s.sweep((name) => name !== h), 0, 'a held blob is not swept');
    s.release(h);
  }
  t.pass('100 rounds kept their blobs');
});
