/**
 * VictoriaLogs for the peer benchmark: the binary (built once with `go install` into a cache outside
 * the repository), a server on 127.0.0.1 with a temp data dir, and its HTTP API: /insert/jsonline,
 * /select/logsql/query, /select/logsql/stats_query_range, /internal/force_flush. Each dataset goes
 * to its own tenant (AccountID 0, ProjectID 1 or 2), the peer's counterpart of a repository.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const VL_VERSION = 'v1.52.1';
const VL_MODULE = 'github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs';
/** Where the binary is cached: outside the repository, one dir per version. */
export const DEFAULT_VL_BIN = join(homedir(), '.cache', 'logsvc', `victoria-logs-${VL_VERSION}`, 'victoria-logs');
const BUILD_TIMEOUT_MS = 30 * 60_000;
const READY_TIMEOUT_MS = 60_000;
const TAIL_CHARS = 16_384;

/** @type {Set<VictoriaLogsServer>} */
const running = new Set();
// Last resort: a VictoriaLogs this run started never outlives it.
process.on('exit', () => {
  for (const s of running) if (s.running) s.proc.kill('SIGKILL');
});

/**
 * The binary at `bin`, built with `go install` when it is absent (minutes, once).
 * @param {string} bin
 * @param {(line: string) => void} progress
 */
export function ensureBinary(bin, progress) {
  if (existsSync(bin)) return bin;
  const dir = join(bin, '..');
  mkdirSync(dir, { recursive: true });
  progress(`[victorialogs] building ${VL_MODULE}@${VL_VERSION} into ${dir} (once; several minutes)`);
  const gopath = join(homedir(), '.cache', 'logsvc', 'vl-gopath');
  const r = spawnSync('go', ['install', `${VL_MODULE}@${VL_VERSION}`], {
    env: { ...process.env, GOBIN: dir, GOPATH: process.env.GOPATH ?? gopath, GOFLAGS: '-mod=mod' },
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: BUILD_TIMEOUT_MS,
  });
  if (r.status !== 0 || !existsSync(bin)) throw new Error(`go install ${VL_MODULE}@${VL_VERSION} failed (status ${r.status}${r.error ? `, ${r.error.message}` : ''}); is Go installed?`);
  return bin;
}

/** A free loopback port (VictoriaLogs takes a fixed port; the gap between close and bind is tiny). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export class VictoriaLogsServer {
  /** @param {import('node:child_process').ChildProcess} proc @param {string} url */
  constructor(proc, url) {
    this.proc = proc;
    this.url = url;
    this.output = '';
    /** @type {Promise<void>} */
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const keep = (/** @type {Buffer} */ d) => (this.output = (this.output + d.toString()).slice(-TAIL_CHARS));
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
  }

  get pid() {
    return /** @type {number} */ (this.proc.pid);
  }

  get running() {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGTERM (it flushes and exits), SIGKILL after `timeoutMs`. @param {number} timeoutMs */
  async stop(timeoutMs) {
    if (this.running) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    running.delete(this);
  }
}

/**
 * Starts VictoriaLogs on 127.0.0.1 with `dataDir`; resolves once /health answers 200.
 * @param {string} bin
 * @param {string} dataDir
 * @returns {Promise<VictoriaLogsServer>}
 */
export async function startVictoriaLogs(bin, dataDir) {
  const port = await freePort();
  const args = [
    `-httpListenAddr=127.0.0.1:${port}`,
    `-storageDataPath=${dataDir}`,
    // The corpus is dated 2024: keep it (the default retention is 7 days).
    '-retentionPeriod=100y',
    '-loggerLevel=WARN',
  ];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = `http://127.0.0.1:${port}`;
  const server = new VictoriaLogsServer(proc, url);
  running.add(server);
  const t0 = performance.now();
  for (;;) {
    if (!server.running) throw new Error(`VictoriaLogs exited before it was ready:\n${server.output}`);
    try {
      const r = await fetch(`${url}/health`);
      await r.arrayBuffer();
      if (r.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > READY_TIMEOUT_MS) {
      await server.stop(5_000);
      throw new Error(`VictoriaLogs did not answer /health within ${READY_TIMEOUT_MS} ms:\n${server.output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Tenant headers of a dataset. @param {number} project */
export function tenantHeaders(project) {
  return { AccountID: '0', ProjectID: String(project) };
}

/** The ingest path: stream fields, message and time fields named. */
export const VL_INSERT_PATH = '/insert/jsonline?_stream_fields=shipper,source&_msg_field=_msg&_time_field=_time';

/**
 * Makes every ingested row searchable and written (VictoriaLogs buffers inserts in memory for up to
 * a second before they are searchable).
 * @param {import('undici').Pool} client
 */
export async function forceFlush(client) {
  const res = await client.request({ path: '/internal/force_flush', method: 'GET' });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`/internal/force_flush answered HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
}

/**
 * POSTs a form to a /select endpoint of a tenant: the status and the text.
 * @param {import('undici').Pool} client
 * @param {string} path
 * @param {number} project
 * @param {Record<string, string>} form
 * @param {number} timeoutMs
 */
async function postForm(client, path, project, form, timeoutMs) {
  const res = await client.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...tenantHeaders(project) },
    body: new URLSearchParams(form).toString(),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** @param {{ start: number, end: number }} range ms */
const rangeForm = (range) => ({ start: new Date(range.start).toISOString(), end: new Date(range.end).toISOString() });

/**
 * A LogsQL query through /select/logsql/query: the rows (JSON lines).
 * @param {import('undici').Pool} client
 * @param {number} project
 * @param {string} query
 * @param {{ start: number, end: number }} range ms
 * @param {number} timeoutMs
 * @returns {Promise<{ status: number, rows: Record<string, string>[], text: string }>}
 */
export async function vlQuery(client, project, query, range, timeoutMs) {
  const { status, text } = await postForm(client, '/select/logsql/query', project, { query, ...rangeForm(range) }, timeoutMs);
  if (status !== 200) return { status, rows: [], text };
  const rows = text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  return { status, rows, text: '' };
}

/**
 * A LogsQL stats query over time buckets through /select/logsql/stats_query_range: the Prometheus
 * style matrix, as rows `{ _bucket, <name>: value }` (the bucket start in ms).
 * @param {import('undici').Pool} client
 * @param {number} project
 * @param {string} query
 * @param {{ start: number, end: number }} range ms
 * @param {string} step e.g. 1m
 * @param {number} timeoutMs
 */
export async function vlStatsRange(client, project, query, range, step, timeoutMs) {
  const { status, text } = await postForm(client, '/select/logsql/stats_query_range', project, { query, ...rangeForm(range), step }, timeoutMs);
  if (status !== 200) return { status, rows: [], text };
  const doc = JSON.parse(text);
  /** @type {Record<string, string | number>[]} */
  const rows = [];
  for (const series of doc?.data?.result ?? []) {
    const name = String(series.metric?.__name__ ?? 'value');
    for (const [t, v] of series.values ?? []) rows.push({ _bucket: Math.round(Number(t) * 1000), [name]: v });
  }
  return { status, rows, text: '' };
}
