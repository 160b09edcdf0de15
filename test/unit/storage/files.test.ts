import t from 'tap';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atomicWriteFile, diskUsage, ensureDir, fsyncDir } from '../../../src/storage/files.js';

async function tempDir(t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('atomicWriteFile writes a new file with the given content', async (t) => {
  const dir = await tempDir(t);
  const p = join(dir, 'a.bin');
  await atomicWriteFile(p, Buffer.from([1, 2, 3, 0, 255]));
  t.same([...(await readFile(p))], [1, 2, 3, 0, 255]);
  await atomicWriteFile(join(dir, 'b.txt'), 'héllo\n');
  t.equal(await readFile(join(dir, 'b.txt'), 'utf8'), 'héllo\n', 'strings are written as UTF-8');
  t.same((await readdir(dir)).sort(), ['a.bin', 'b.txt'], 'no temporary files left');
});

t.test('atomicWriteFile replaces an existing file', async (t) => {
  const dir = await tempDir(t);
  const p = join(dir, 'state');
  await writeFile(p, 'old content that is longer than the new one');
  await atomicWriteFile(p, 'new');
  t.equal(await readFile(p, 'utf8'), 'new');
  t.same(await readdir(dir), ['state']);
});

t.test('atomicWriteFile applies the mode regardless of umask', async (t) => {
  const dir = await tempDir(t);
  const prev = process.umask(0o077);
  t.teardown(() => void process.umask(prev));
  const p = join(dir, 'secret');
  await atomicWriteFile(p, 'x', 0o600);
  t.equal((await stat(p)).mode & 0o777, 0o600);
  const q = join(dir, 'public');
  await atomicWriteFile(q, 'y');
  t.equal((await stat(q)).mode & 0o777, 0o644, 'default mode 0644 even under umask 077');
  // replacing a file takes the new mode
  await atomicWriteFile(q, 'z', 0o600);
  t.equal((await stat(q)).mode & 0o777, 0o600);
  t.equal(await readFile(q, 'utf8'), 'z');
  t.same((await readdir(dir)).sort(), ['public', 'secret']);
});

t.test('atomicWriteFile writes an empty file and a large one', async (t) => {
  const dir = await tempDir(t);
  await atomicWriteFile(join(dir, 'empty'), new Uint8Array(0));
  t.equal((await stat(join(dir, 'empty'))).size, 0);
  const big = Buffer.alloc(3 * 1024 * 1024 + 17);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  await atomicWriteFile(join(dir, 'big'), big);
  t.ok((await readFile(join(dir, 'big'))).equals(big));
  // a Uint8Array view: only its bytes
  const backing = new Uint8Array([9, 9, 1, 2, 9]);
  await atomicWriteFile(join(dir, 'view'), backing.subarray(2, 4));
  t.same([...(await readFile(join(dir, 'view')))], [1, 2]);
});

t.test('atomicWriteFile into a missing directory rejects and leaves nothing', async (t) => {
  const dir = await tempDir(t);
  await t.rejects(atomicWriteFile(join(dir, 'nope', 'f'), 'x'), { code: 'ENOENT' });
  t.same(await readdir(dir), []);
});

t.test('a failed rename (the target is a directory) rejects and leaves no temporary file', async (t) => {
  const dir = await tempDir(t);
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'target'));
  await t.rejects(atomicWriteFile(join(dir, 'target'), 'x'), { code: 'EISDIR' });
  t.same(await readdir(dir), ['target'], 'only the directory: the temporary file was removed');
});

t.test('concurrent atomicWriteFile calls to one path end with one complete version', async (t) => {
  const dir = await tempDir(t);
  const p = join(dir, 'f');
  const versions = Array.from({ length: 20 }, (_, i) => `version ${i} `.repeat(1000));
  await Promise.all(versions.map((v) => atomicWriteFile(p, v)));
  const got = await readFile(p, 'utf8');
  t.ok(versions.includes(got), 'content is exactly one of the versions');
  t.same(await readdir(dir), ['f']);
});

t.test('ensureDir creates nested directories and is idempotent', async (t) => {
  const dir = await tempDir(t);
  const nested = join(dir, 'a', 'b', 'c');
  await ensureDir(nested);
  t.ok((await stat(nested)).isDirectory());
  await ensureDir(nested);
  t.ok((await stat(nested)).isDirectory());
  await fsyncDir(nested);
  await t.rejects(fsyncDir(join(dir, 'missing')), { code: 'ENOENT' });
});

t.test('diskUsage returns sane numbers', async (t) => {
  const dir = await tempDir(t);
  const u = await diskUsage(dir);
  t.equal(u.path, dir);
  t.ok(Number.isSafeInteger(u.totalBytes) && u.totalBytes > 0, `totalBytes ${u.totalBytes}`);
  t.ok(Number.isSafeInteger(u.freeBytes) && u.freeBytes >= 0, `freeBytes ${u.freeBytes}`);
  t.ok(u.freeBytes <= u.totalBytes, 'free <= total');
  t.ok(u.usedPercent >= 0 && u.usedPercent <= 100, `usedPercent ${u.usedPercent}`);
  t.equal(u.usedPercent, ((u.totalBytes - u.freeBytes) / u.totalBytes) * 100, 'usedPercent from the two totals');
  const file = join(dir, 'f');
  await writeFile(file, 'x');
  const f = await diskUsage(file);
  t.equal(f.totalBytes, u.totalBytes, 'a file on the same filesystem reports the same total');
  await t.rejects(diskUsage(join(dir, 'missing')), { code: 'ENOENT' });
});
