/**
 * The footprint of an idle node on an empty data dir (issue 19, "Footprint"): /metrics says what
 * its resident memory is made of, the node's own log lines are digested without starting a worker
 * thread (a small block is built inline), and the RSS stays under a generous guard. The guard is
 * not the target (80 MB, measured by bench/peers and docs/benchmarks.md): it only catches a gross
 * regression (a module of tens of MB loaded at start, worker threads started eagerly) on any
 * machine. Under tap the node also carries tap's own process-info hook (tap's spawn wrapper puts
 * NODE_OPTIONS=--import @tapjs/processinfo back into the child's environment), about 60 MB more
 * than the same node started by bench/footprint or bench/peers; the guard leaves room for that.
 * LOGSVC_TEST_IDLE_RSS_MB overrides it.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { parsePrometheus, sumOf } from '../helpers/prometheus.js';

const GUARD_MB = Number(process.env.LOGSVC_TEST_IDLE_RSS_MB ?? 200);

t.test('an idle empty node: resident memory by kind in /metrics, no worker thread for its own logs, RSS under the guard', async (t) => {
  // Self logs on (the product default) with a short flush, so the node's own lines make blocks.
  const node = await startNode(t, { selfLogs: true, config: '[digest]\nflush_block_seconds = 1\n' });
  const scrape = async (): Promise<Map<string, { labels: Record<string, string>; value: number }[]>> => {
    const res = await api(node.url, '/metrics');
    t.equal(res.status, 200);
    return parsePrometheus(res.text);
  };
  // The node's start-up lines are in the humio repository once a block was flushed (bounded wait).
  let m = await scrape();
  for (let i = 0; i < 60 && sumOf(m, 'logsvc_segments') === 0 && sumOf(m, 'logsvc_queue_lag_bytes') > 0; i++) {
    await new Promise((r) => setTimeout(r, 500));
    m = await scrape();
  }
  await new Promise((r) => setTimeout(r, 3000));
  m = await scrape();

  const resident = sumOf(m, 'logsvc_process_resident_memory_bytes');
  const kinds = m.get('logsvc_process_resident_bytes') ?? [];
  const anon = kinds.find((s) => s.labels.kind === 'anon')?.value ?? NaN;
  const file = kinds.find((s) => s.labels.kind === 'file')?.value ?? NaN;
  t.ok(anon > 0 && file > 0, `resident memory by kind is exposed (anon ${anon}, file ${file})`);
  t.ok(kinds.some((s) => s.labels.kind === 'shmem'), 'shmem too');
  // Read a moment apart from prom-client's own reading: equal within a few MB.
  t.ok(Math.abs(anon + file - resident) < 16 * 1024 * 1024, `anon + file (${anon + file}) is the resident memory (${resident})`);
  t.ok(sumOf(m, 'logsvc_ingest_events_total', { repository: 'humio' }) > 0, "the node's own lines were ingested");
  for (const pool of ['foreground', 'background', 'query']) {
    t.equal(sumOf(m, 'logsvc_worker_pool_threads', { pool }), 0, `no ${pool} worker thread runs on an idle node`);
  }
  t.ok(resident < GUARD_MB * 1024 * 1024, `idle RSS ${(resident / 1e6).toFixed(1)} MB is under the ${GUARD_MB} MB guard`);
});
