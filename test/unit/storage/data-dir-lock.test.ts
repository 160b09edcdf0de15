import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLock } from '../../../src/storage/data-dir-lock.js';

async function tempDir(t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-lock-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function spawnSleeper(t: { teardown: (fn: () => unknown) => void }): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(()=>{},30000)'], { stdio: 'ignore' });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  });
  return child;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

const LOCK = 'logsvc.lock';

t.test('acquire writes our pid; release removes the file', async (t) => {
  const dir = await tempDir(t);
  const lock = await DataDirLock.acquire(dir);
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`);
  await lock.release();
  t.same(await readdir(dir), []);
  await lock.release(); // a second release is harmless
  t.same(await readdir(dir), []);
  const again = await DataDirLock.acquire(dir);
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`, 'can be taken again after release');
  await again.release();
});

t.test('a lock held by another live process is refused with E_DATA_DIR_LOCKED', async (t) => {
  const dir = await tempDir(t);
  const child = spawnSleeper(t);
  t.ok(child.pid !== undefined && child.pid !== process.pid);
  await writeFile(join(dir, LOCK), `${child.pid}\n`);
  await t.rejects(DataDirLock.acquire(dir), {
    name: 'LogsvcError',
    code: 'E_DATA_DIR_LOCKED',
    httpStatus: 500,
    message: new RegExp(`in use by another logsvc process \\(pid ${child.pid}\\)`),
  });
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${child.pid}\n`, 'the other owner\'s lock file is left alone');
  // without the trailing newline too
  await writeFile(join(dir, LOCK), String(child.pid));
  await t.rejects(DataDirLock.acquire(dir), { code: 'E_DATA_DIR_LOCKED' });
  t.equal(await readFile(join(dir, LOCK), 'utf8'), String(child.pid));

  // once the owner is gone the lock is taken over
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  const lock = await DataDirLock.acquire(dir);
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`);
  await lock.release();
});

t.test('a lock file with a dead pid is taken over', async (t) => {
  const dir = await tempDir(t);
  const pid = await deadPid();
  await writeFile(join(dir, LOCK), `${pid}\n`);
  const lock = await DataDirLock.acquire(dir);
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`);
  await lock.release();
  t.same(await readdir(dir), []);
});

t.test('an empty or garbage lock file (crash before the pid was written) is taken over', async (t) => {
  for (const content of ['', 'garbage', '\n']) {
    const dir = await tempDir(t);
    await writeFile(join(dir, LOCK), content);
    const lock = await DataDirLock.acquire(dir);
    t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`, `content ${JSON.stringify(content)}`);
    await lock.release();
  }
});

t.test('a lock file naming our own pid is taken over (stale lock from a previous run with a reused pid)', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, LOCK), `${process.pid}\n`);
  const lock = await DataDirLock.acquire(dir);
  t.equal(await readFile(join(dir, LOCK), 'utf8'), `${process.pid}\n`);
  await lock.release();
});

t.test('a missing data dir is an error other than E_DATA_DIR_LOCKED', async (t) => {
  const dir = await tempDir(t);
  await t.rejects(DataDirLock.acquire(join(dir, 'missing')), { code: 'ENOENT' });
});
