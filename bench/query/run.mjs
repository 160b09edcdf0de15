#!/usr/bin/env node
/**
 * The query benchmark (issue 4): ingest an access-log corpus of at least --corpus-mb MB of raw text
 * through the real HTTP API into a fresh repository, wait until the node has written it to
 * segments, then time a rare-token search (free text and field filter), count(), groupBy and
 * timechart over all of it, checking every answer; stop the node, and measure the machine's limits
 * (single-thread LZ4 decompression and Buffer.indexOf) over the segment files it wrote. Everything
 * binds 127.0.0.1; every process and temp dir this run starts is removed at the end, on Ctrl-C, on
 * errors and at the run's time budget. `--help` lists the options.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { queryReport } from './plots.mjs';
import { describeBuild, distBuild } from '../lib/build.mjs';
import { createControlClient, graphql } from '../lib/http.mjs';
import { keepTempDir, makeTempDir, readCpuSeconds, readVmRss, removeTempDir, startLogsvcNode, storedSegmentBytes } from '../lib/processes.mjs';
import { commandLine, machine } from '../ingest/report.mjs';
import { CorpusGenerator, ingestCorpus } from './corpus.mjs';
import { measureLimits } from './limits.mjs';
import { HELP, parseOptions } from './options.mjs';
import { runWithin, startRun } from '../lib/cli.mjs';
import { queryCases, runQuery } from './queries.mjs';
import { header, ingestBlock, limitsBlock, queryTable, storedLine, summary } from './report.mjs';
import { waitDigested } from '../lib/digest.mjs';

/** The query range: the whole corpus (at most 23 hours old) and, for timechart(), 97 buckets of 15 minutes. */
const QUERY_START = '24hours';
const TIMECHART_ROWS = 97;
/**
 * The spawned node's config: blocks reach segments 5 s after their first event instead of after 30
 * minutes, and ingest is never refused for backpressure before the corpus is in (the queue is on disk).
 */
const NODE_CONFIG = `# written by bench/query/run.mjs
[digest]
flush_block_seconds = 5

[ingest]
max_undigested_bytes = 68719476736
`;
/** A node gets this long to drain open blocks into segments after SIGTERM. */
const NODE_STOP_TIMEOUT_MS = 120_000;

/** @typedef {import('./options.mjs').QueryBenchOptions} QueryBenchOptions */

const log = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/** @param {QueryBenchOptions} o */
async function main(o) {
  const date = new Date().toISOString();
  const command = commandLine();
  const mach = machine();
  const build = await distBuild();
  log(header({ command, machine: mach, date, options: o, node: o.url === null ? `spawned: 127.0.0.1, fresh temp data dir, [digest] flush_block_seconds = 5; ${describeBuild(build)}` : o.url }));

  /** @type {import('../lib/processes.mjs').ChildServer | null} */
  let server = null;
  /** @type {string | null} */
  let root = null;
  let url;
  let adminToken;
  let pid;
  let dataDir;
  if (o.url === null) {
    root = await makeTempDir('logsvc-bench-query-');
    const nodeFlags = [];
    if (o.cpuProf !== null) {
      await mkdir(o.cpuProf, { recursive: true });
      nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${resolve(o.cpuProf)}`);
    }
    const started = await startLogsvcNode({ rootDir: root, config: NODE_CONFIG, nodeFlags });
    server = started.server;
    url = server.url;
    adminToken = started.adminToken;
    pid = server.pid;
    dataDir = started.dataDir;
    progress(`[node] pid ${pid} at ${url}, data dir ${dataDir}`);
  } else {
    url = o.url;
    adminToken = /** @type {string} */ (o.adminToken);
    pid = o.pid;
    dataDir = o.dataDir;
  }

  const control = createControlClient(url);
  try {
    const created = await graphql(control, adminToken, `mutation { createRepository(name: ${JSON.stringify(o.repo)}) { repository { id ingestTokens { token } } } }`).catch((err) => {
      throw new Error(`creating repository "${o.repo}" failed: ${err.message} (the repository must not exist yet; pick another with --repo)`);
    });
    const repoId = created?.createRepository?.repository?.id;
    const ingestToken = o.token ?? created?.createRepository?.repository?.ingestTokens?.[0]?.token;
    if (typeof repoId !== 'string' || typeof ingestToken !== 'string') throw new Error(`createRepository returned no id or ingest token: ${JSON.stringify(created).slice(0, 300)}`);

    // The corpus: timestamps from `hours` ago up to now, evenly by raw bytes.
    const endMs = Date.now();
    const spanMs = Math.round(o.hours * 3600_000);
    const generator = new CorpusGenerator({ seed: o.seed, targetRawBytes: Math.round(o.corpusMb * 1e6), startMs: endMs - spanMs, spanMs, rare: o.rare, batch: o.batch });
    const nodeCpu = async () => (pid === null ? null : readCpuSeconds(pid));
    const ingest = await ingestCorpus({ url, token: ingestToken, generator, connections: o.connections, endMs, nodeCpu, nodeRss: async () => (pid === null ? null : readVmRss(pid)), progress });
    const digest = { ...(await waitDigested(control, adminToken, o.digestTimeoutS * 1000)), rssBytes: pid === null ? null : await readVmRss(pid) };
    log(ingestBlock(ingest, digest));

    /** @type {import('./queries.mjs').QueryResult[]} */
    const queries = [];
    for (const q of queryCases(ingest.corpus, TIMECHART_ROWS)) {
      queries.push(await runQuery({ client: control, repo: o.repo, token: adminToken, q, start: QUERY_START, repeat: o.repeat, timeoutMs: o.queryTimeoutS * 1000, pid, corpus: ingest.corpus, progress }));
    }
    log(queryTable(queries, QUERY_START, o.repeat));

    /** @type {{ files: number, bytes: number, complete: boolean, exit: string, stopMs: number } | null} */
    let stored = null;
    if (server !== null) {
      progress('[node] stopping (SIGTERM; open blocks are written and segments closed)');
      const stop = await server.stop(NODE_STOP_TIMEOUT_MS);
      const clean = !stop.killed && stop.code === 0;
      if (!clean) progress(`[node] did not stop cleanly (${JSON.stringify(stop)}); stderr tail:\n${server.stderr.slice(-4000)}`);
      const seg = await storedSegmentBytes(/** @type {string} */ (dataDir));
      stored = { ...seg, complete: clean, stopMs: stop.ms, exit: stop.killed ? 'killed after timeout' : `exit code ${stop.code}${stop.signal === null ? '' : `, signal ${stop.signal}`}` };
      log(storedLine(stored, ingest.corpus));
    }

    /** @type {import('./limits.mjs').LimitsResult | null} */
    let limits = null;
    if (o.limits && dataDir !== null) {
      limits = await measureLimits({ segmentsDir: join(dataDir, 'segments', repoId), passes: o.repeat, progress });
      log(limitsBlock(limits));
    } else {
      log(`limits    not measured (${o.limits ? 'with --url, pass --data-dir to read the node\'s segments' : '--no-limits'})\n`);
    }

    const buildAtEnd = await distBuild();
    const rebuilt = o.url === null && buildAtEnd.builtAt !== build.builtAt;
    const sum = summary({ corpus: ingest.corpus, queries, limits, possibleDuplicates: ingest.retriedTransport > 0, rebuilt: rebuilt ? describeBuild(buildAtEnd) : null });
    log(sum.text);
    const reportFile = o.report ?? `bench/reports/query-${date.replace(/[:.]/g, '-')}.html`;
    await mkdir(dirname(resolve(reportFile)), { recursive: true });
    await writeFile(reportFile, queryReport({ date, command, machine: mach, ingest, queries, limits, summaryText: sum.text }));
    log(`report with plots: ${reportFile}`);
    if (server !== null && /\b(error|ERROR|fatal)\b/.test(server.stderr)) {
      log(`node stderr (tail) mentions errors:\n${server.stderr.slice(-3000)}\n`);
    }
    if (o.out !== null) {
      const recorded = { ...o, token: o.token === null ? null : '<redacted>', adminToken: o.adminToken === null ? null : '<redacted>' };
      const { rareTimestamps: _r, ...corpus } = ingest.corpus;
      await appendFile(o.out, `${JSON.stringify({ date, command, machine: mach, options: recorded, corpus, build, buildAtEnd, ingest: { ...ingest, corpus: undefined }, digest, queries, stored, limits, checks: sum.checks, targets: sum.targets })}\n`);
      log(`result appended to ${o.out}`);
    }
  } finally {
    await control.close();
    if (server !== null && server.running) await server.stop(5_000);
    if (root !== null) {
      if (o.keepData) {
        keepTempDir(root);
        progress(`[node] kept the node's temp dir: ${root} (data in ${root}/data)`);
      } else {
        await removeTempDir(root);
      }
    }
  }
}

const { options, abort } = startRun(parseOptions(process.argv.slice(2)), HELP);
const budgetMs = options.budgetMinutes * 60_000;
await runWithin(abort, budgetMs, `${options.budgetMinutes} minutes (--budget-minutes)`, () => main(options));
