/**
 * Fault injection (issue 24, defect 4): a real node whose data dir is on a small tmpfs made for the
 * test. The disk is filled faster than any disk check (a filler file written to the last byte): ingest
 * must answer 503 (E_DISK_FULL) with Retry-After, never a reset; queries and /api/v1/status go on; a
 * management change answers 503 rather than stopping the node; once the filler is removed ingest
 * resumes by itself and every acknowledged event is found (acked N / found N). Then the node is
 * restarted on a full disk: it starts, serves queries, refuses ingest with a clear error, and takes
 * ingest again when space returns.
 *
 * Needs root (mount -t tmpfs); skipped with the reason where the machine does not allow it.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';
import { countOf, createRepo, sleep } from '../helpers/query.js';

function mountTmpfs(sizeMb: number): { dir: string; unmount: () => void } | string {
  if (process.platform !== 'linux') return `needs Linux tmpfs (platform ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs for the full disk';
  const dir = mkdtempSync(join(tmpdir(), 'logsvc-enospc-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes zeros to `path` until the disk refuses (ENOSPC); returns the bytes written. */
async function fill(path: string): Promise<number> {
  const fh = await open(path, 'w');
  const chunk = Buffer.alloc(256 * 1024);
  let n = 0;
  try {
    for (;;) {
      try {
        const { bytesWritten } = await fh.write(chunk);
        n += bytesWritten;
        if (bytesWritten < chunk.length) chunk.fill(0, 0, 0);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
        throw err;
      }
    }
    // The last scraps: single bytes until nothing fits.
    const one = Buffer.alloc(4096);
    for (;;) {
      try {
        await fh.write(one);
      } catch {
        break;
      }
    }
  } finally {
    await fh.close();
  }
  return n;
}

const body = (batch: number, size = 20): string =>
  JSON.stringify([{ tags: { host: 'fault' }, events: Array.from({ length: size }, (_, i) => ({ timestamp: Date.now(), attributes: { batch, i, pad: 'x'.repeat(200) } })) }]);

/** Refusals without a Retry-After header. */
let bareRefusals = 0;

async function ingestOnce(node: TestNode, token: string, batch: number): Promise<number> {
  try {
    const r = await api(node.url, '/api/v1/ingest/humio-structured', { token, body: body(batch), timeoutMs: 20_000 });
    if (r.status === 503 && !/^\d+$/.test(r.headers.get('retry-after') ?? '')) bareRefusals++;
    return r.status;
  } catch (err) {
    return -1; // a reset or timeout: counted and asserted on
  }
}

const mounted = mountTmpfs(48);
if (typeof mounted === 'string') {
  t.test(`ENOSPC fault injection: ${mounted}`, { skip: mounted }, () => undefined);
} else {
  t.teardown(() => mounted.unmount());
  t.test('a full disk refuses ingest and changes, keeps serving, resumes, loses nothing (defect 4)', async (t) => {
    t.setTimeout(240_000);
    const dataDir = join(mounted.dir, 'data');
    // The disk checks are out of the way (DOWN only at 100 %): this is the disk that fills faster than they look.
    const config = '[health]\ngrace_period_seconds = 0\ndisk_warn_percent = 100\ndisk_down_percent = 100\n';
    let node = await startNode(t, { dataDir, config });
    const repo = await createRepo(node.url, node.adminToken, 'fault');
    let acked = 0;
    let batch = 0;
    for (; batch < 10; batch++) {
      t.equal(await ingestOnce(node, repo.ingestToken, batch), 200);
      acked += 20;
    }
    const filler = join(mounted.dir, 'filler');
    const filled = await fill(filler);
    t.ok(filled > 0, `filled the disk with ${filled} bytes`);

    const statuses: number[] = [];
    for (let i = 0; i < 30; i++, batch++) {
      const s = await ingestOnce(node, repo.ingestToken, batch);
      statuses.push(s);
      if (s === 200) acked += 20;
    }
    t.ok(statuses.includes(503), `ingest on a full disk answers 503: ${statuses.join(' ')}`);
    t.notOk(statuses.includes(-1), 'no connection was reset');
    t.ok(statuses.every((s) => s === 200 || s === 503), `only 200 or 503: ${statuses.join(' ')}`);
    t.equal(bareRefusals, 0, 'every 503 carries Retry-After');
    t.equal(node.proc.exitCode, null, `the node is still running: ${node.stderr().slice(-500)}`);
    t.ok((await api(node.url, '/api/v1/status')).status > 0, '/api/v1/status answers');
    // Queries are served on the full disk.
    t.ok((await countOf(node.url, 'fault', node.adminToken)) >= 0, 'count() answers on a full disk');
    // A management change answers 503 rather than stopping the node.
    // (The last page of the global log may still take a small change or two.)
    let refusedChange: string | null = null;
    for (let i = 0; i < 200 && refusedChange === null; i++) {
      const change = await gql(node.url, node.adminToken, `mutation { createRepository(name: "another${i}") { repository { id } } }`);
      if (change.status !== 200 || change.errors !== undefined) refusedChange = `${change.status} ${JSON.stringify(change.errors)}`;
    }
    t.match(refusedChange, /disk is full/, `a change on a full disk is refused: ${refusedChange}`);
    t.equal(node.proc.exitCode, null, 'still running after the refused change');

    // Space returns: ingest resumes by itself.
    await rm(filler);
    let resumed = false;
    for (let i = 0; i < 60 && !resumed; i++, batch++) {
      const s = await ingestOnce(node, repo.ingestToken, batch);
      if (s === 200) {
        acked += 20;
        resumed = true;
      } else await sleep(500);
    }
    t.ok(resumed, 'ingest resumed by itself once space returned');
    let found = -1;
    for (let i = 0; i < 60 && found !== acked; i++) {
      found = await countOf(node.url, 'fault', node.adminToken);
      if (found !== acked) await sleep(500);
    }
    t.equal(found, acked, `acked ${acked} / found ${found}`);

    // A restart on a full disk: read-only.
    const stopped = await node.stopOutcome();
    t.equal(stopped.code, 0, stopped.describe);
    await fill(filler);
    node = await startNode(t, { dataDir, config, readyTimeoutMs: 60_000 });
    t.equal(await countOf(node.url, 'fault', node.adminToken), acked, 'after a restart on a full disk every acknowledged event is found');
    const refused = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body: body(9999) });
    t.equal(refused.status, 503, refused.text);
    t.match(refused.text, /disk/i, 'the refusal names the disk');
    await rm(filler);
    let again = 0;
    for (let i = 0; i < 60 && again !== 200; i++) {
      again = await ingestOnce(node, repo.ingestToken, batch++);
      if (again !== 200) await sleep(500);
    }
    t.equal(again, 200, 'ingest resumes after a start on a full disk');
    acked += 20;
    let found2 = -1;
    for (let i = 0; i < 60 && found2 !== acked; i++) {
      found2 = await countOf(node.url, 'fault', node.adminToken);
      if (found2 !== acked) await sleep(500);
    }
    t.equal(found2, acked, `acked ${acked} / found ${found2} after the restart`);
    t.equal((await api(node.url, '/api/v1/status')).status, 200);
    await node.stop();
  });
}
