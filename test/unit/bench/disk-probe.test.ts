import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
// @ts-expect-error the benchmarks are plain JavaScript modules without declarations
import { fsyncProbe } from '../../../bench/lib/disk.mjs';

const probe = fsyncProbe as (dir: string, o?: { writes?: number; bytes?: number }) => Promise<{ p50Ms: number; p90Ms: number; maxMs: number }>;

t.test('the fsync probe times durable writes in the directory and leaves nothing behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'disk-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = await probe(dir, { writes: 5, bytes: 4096 });
  t.ok(r.p50Ms >= 0 && r.p50Ms <= r.p90Ms && r.p90Ms <= r.maxMs, `ordered quantiles: ${JSON.stringify(r)}`);
  t.same(readdirSync(dir), [], 'the probe file is gone');
  await t.rejects(probe(join(dir, 'missing')), /ENOENT/, 'a directory that is not there is an error, not a figure');
});
