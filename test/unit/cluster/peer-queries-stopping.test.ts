/**
 * A stopping node takes no query parts (issue 24): it refuses `query.scan` with E_NODE_STOPPING, so
 * the coordinator leaves its part out and warns (the executor's missing-segments warning on a failed
 * peer part), rather than take a part the stop may cut short. A node that is not stopping serves
 * the same request.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GlobalStore } from '../../../src/global/index.js';
import { PeerQueries, QUERY_SCAN, type PeerRpc } from '../../../src/cluster/peer-queries.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import type { QuerySpec } from '../../../src/query/scan.js';

async function setup(t: Test, stopping: boolean): Promise<{ serve: (body: unknown) => Promise<unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-pq-'));
  const store = await GlobalStore.open(new EmbeddedGlobalLog(join(dir, 'global')), { snapshotEvery: 1_000_000, logger: silentLogger });
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  let serve: ((body: unknown) => Promise<unknown>) | null = null;
  const rpc: PeerRpc = {
    aliveIds: () => new Set([1, 2, 3]),
    request: () => Promise.reject(new Error('not asked in this test')),
    handle: (type, fn) => {
      if (type === QUERY_SCAN) serve = fn;
    },
  };
  new PeerQueries({
    selfId: 1,
    rpc,
    store,
    scanLocal: () => Promise.reject(new Error('not scanned in this test')),
    hasSegment: () => true,
    withFiles: (spec) => Promise.resolve(spec),
    timeoutMs: 1000,
    stopping: () => stopping,
  });
  return { serve: serve! };
}

const spec = { text: 'count()', args: {}, ctx: { start: 0, end: Date.now() }, limits: {} } as unknown as QuerySpec;

t.test('a stopping node refuses the query parts it is asked for', async (t) => {
  const { serve } = await setup(t, true);
  const err = await serve({ repo: { id: 'r', name: 'r' }, text: 'count()', args: {}, ctx: spec.ctx, limits: {} }).then(() => null, (e: unknown) => e);
  t.ok(err instanceof LogsvcError, String(err));
  t.equal((err as LogsvcError).code, 'E_NODE_STOPPING');
  t.match((err as LogsvcError).message, /node 1 is stopping/);
  // Not stopping: the same request goes on to the scan (which this test's scanLocal refuses).
  const running = await setup(t, false);
  const other = await running.serve({ repo: { id: 'r', name: 'r' }, text: 'count()', args: {}, ctx: spec.ctx, limits: {} }).then(() => null, (e: unknown) => e);
  t.notOk(other instanceof LogsvcError && other.code === 'E_NODE_STOPPING', `not refused as stopping: ${String(other)}`);
});
