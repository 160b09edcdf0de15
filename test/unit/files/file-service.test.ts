/**
 * FileService against a real global store, a real blob directory and a packer that runs the pool
 * task inline (the same function the workers run): atomic replacement seen by concurrent readers,
 * packs one at a time, the disk and total bounds.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GlobalStore } from '../../../src/global/index.js';
import { BlobStore, FileService, runPackTask, type FileKind, type PackSource, type PackedTable, type TablePacker } from '../../../src/files/index.js';
import { unwrapPackResult } from '../../../src/files/pack-task.js';
import { cellValue, viewsOf } from '../../../src/files/packed.js';
import { systemClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import type { Principal } from '../../../src/auth/index.js';

const root: Principal = { kind: 'local-admin', isRoot: true };

/** The pool's task, run inline; counts how many packs overlap. */
class InlinePacker implements TablePacker {
  running = 0;
  mostAtOnce = 0;
  packs = 0;
  async pack(source: PackSource, kind: FileKind, hash: string, maxRows: number): Promise<PackedTable> {
    this.running++;
    this.packs++;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
    try {
      await new Promise((r) => setTimeout(r, 5));
      return unwrapPackResult(await runPackTask({ source, kind, hash, maxRows }));
    } finally {
      this.running--;
    }
  }
}

async function setup(t: Test, limits: Partial<ConstructorParameters<typeof FileService>[3]> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await GlobalStore.open(new EmbeddedGlobalLog(join(dir, 'global')), { snapshotEvery: 1_000_000, logger: silentLogger });
  await store.transact(() => ({ events: [{ type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 }], result: undefined }));
  const blobs = new BlobStore(join(dir, 'files'));
  await blobs.open();
  const packer = new InlinePacker();
  const files = new FileService(store, blobs, packer, { maxFileBytes: 1 << 20, maxRows: 1000, maxFilesPerRepository: 10, maxTotalBytes: 1 << 20, cacheBytes: 1 << 20, ...limits }, systemClock, silentLogger);
  return { store, blobs, packer, files };
}

const csv = (v: string) => Buffer.from(`k,v\nkey,${v}\n`);

t.test('a replace is atomic: every concurrent reader sees one whole version, never none', async (t) => {
  const { files } = await setup(t);
  await files.upload(root, 'web', 'a.csv', csv('v0'));
  const seen = new Set<string>();
  let failures = 0;
  let writing = true;
  const readers = Array.from({ length: 4 }, async () => {
    while (writing) {
      try {
        const [dl, tables] = await Promise.all([files.download(root, 'web', 'a.csv'), files.tablesFor('r1', ['a.csv'])]);
        const text = dl.bytes.toString();
        const m = /^k,v\nkey,(v\d+)\n$/.exec(text);
        if (m === null || dl.file.contentHash === undefined) failures++;
        else seen.add(m[1]!);
        const table = tables['a.csv'];
        if (table === undefined || !/^v\d+$/.test(cellValue(viewsOf(table), 0, 1) ?? '')) failures++;
      } catch (err) {
        // The only allowed miss: the bytes of the version a reader resolved were swept meanwhile,
        // reported as a retriable E_NOT_FOUND / E_UNAVAILABLE, never as a wrong or partial file.
        if (!(err instanceof LogsvcError) || !['E_NOT_FOUND', 'E_UNAVAILABLE'].includes(err.code)) failures++;
      }
      await new Promise((r) => setImmediate(r));
    }
  });
  for (let i = 1; i <= 20; i++) await files.upload(root, 'web', 'a.csv', csv(`v${i}`));
  writing = false;
  await Promise.all(readers);
  t.equal(failures, 0, 'no reader saw a partial, empty or broken file');
  t.ok(seen.size >= 2, `readers saw several versions (${[...seen].join(', ')})`);
  const last = await files.download(root, 'web', 'a.csv');
  t.equal(last.bytes.toString(), csv('v20').toString(), 'the last version stays');
});

t.test('packs run one at a time', async (t) => {
  const { files, packer } = await setup(t);
  await Promise.all(Array.from({ length: 6 }, (_, i) => files.upload(root, 'web', `f${i}.csv`, csv(`x${i}`))));
  t.equal(packer.packs, 6);
  t.equal(packer.mostAtOnce, 1);
  // A failing pack does not stop the ones after it.
  const bad = files.upload(root, 'web', 'bad.csv', Buffer.from('a,b\n1\n'));
  const good = files.upload(root, 'web', 'good.csv', csv('g'));
  await t.rejects(bad, { code: 'E_VALIDATION' });
  t.equal((await good).name, 'good.csv');
});

t.test('the same bytes as .json and .csv are two tables; the total bound; shared files need root', async (t) => {
  const { files } = await setup(t, { maxTotalBytes: 64 });
  const bytes = Buffer.from('[{"a":"1"}]');
  await files.upload(root, 'web', 'x.json', bytes);
  await t.rejects(files.upload(root, 'web', 'x.csv', bytes), { code: 'E_VALIDATION' });
  await files.upload(root, 'web', 'copy.json', bytes);
  await t.rejects(files.upload(root, 'web', 'y.csv', Buffer.from(`k,v\n${'z'.repeat(60)},1\n`)), { code: 'E_CONFLICT', message: /files\.max_total_bytes/ });
  const user: Principal = { kind: 'user', userId: 'u', username: 'u', isRoot: false };
  await t.rejects(files.upload(user, null, 's.csv', csv('s')), { code: 'E_FORBIDDEN' });
});
