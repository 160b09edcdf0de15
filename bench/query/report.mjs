/**
 * What the query benchmark prints and records: the header (exact command, machine, date, corpus),
 * the ingest and digest lines, the query table, the machine's limits, the checks of every answer,
 * and the issue's targets against what this run measured. MB is 10^6 bytes throughout.
 */
import { RARE_TOKEN } from './options.mjs';

/** The issue's targets. */
export const TARGETS = Object.freeze({
  /** rare-token search: raw MB/s of the corpus */
  rareTokenRawMBps: 5000,
  /** full-scan count(): raw MB/s per core of node CPU, as a share of single-thread LZ4 (raw-equivalent) */
  countShareOfDecompressPerCore: 0.5,
});

/** @param {number | null | undefined} n @param {number} digits */
export const fmt = (n, digits = 0) => (n == null || !Number.isFinite(n) ? 'n/a' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
/** @param {number | null | undefined} b */
const mb = (b) => (b == null ? 'n/a' : `${fmt(b / 1e6, 1)} MB`);

/**
 * @param {object} h
 * @param {string} h.command
 * @param {ReturnType<typeof import('../ingest/report.mjs').machine>} h.machine
 * @param {string} h.date
 * @param {import('./options.mjs').QueryBenchOptions} h.options
 * @param {string} h.node what node the run uses
 */
export function header(h) {
  const m = h.machine;
  const o = h.options;
  return [
    'logsvc query benchmark',
    `  command   ${h.command}`,
    `  date      ${h.date}`,
    `  machine   ${m.cpuCount} x ${m.cpuModel}, ${fmt(m.totalMemBytes / 2 ** 30, 1)} GiB RAM, ${m.os}, node ${m.node}, load average ${m.loadAverage1m}`,
    `  corpus    accesslog (structured, with attributes), at least ${fmt(o.corpusMb)} MB raw, timestamps evenly over the last ${o.hours} h, ` +
      `${o.rare} events with "${RARE_TOKEN}" (also as userid), seed ${o.seed}; ${o.connections} connections, batch ${o.batch}`,
    `  node      ${h.node}`,
    '',
  ].join('\n');
}

/**
 * @param {import('./corpus.mjs').IngestResult} r
 * @param {{ seconds: number, undigestedBytes: number | null, pendingBlockBytes: number | null, segments: number | null, complete: boolean, rssBytes: number | null }} d
 */
export function ingestBlock(r, d) {
  const c = r.corpus;
  const lines = [
    `ingest    ${fmt(c.events)} events, ${mb(c.rawBytes)} raw (bodies ${mb(c.bodyBytes)}, ${fmt(c.requests)} requests) in ${fmt(r.seconds, 1)} s: ` +
      `${fmt(r.eventsPerSec)} events/s, ${fmt(r.rawMBps, 2)} MB/s raw; node CPU ${r.nodeCpuCores === null ? 'n/a' : `${fmt(r.nodeCpuCores, 2)} cores`}, generator ${fmt(r.generatorCpuCores, 2)} cores`,
    `          @timestamp ${new Date(c.minTs).toISOString()} .. ${new Date(c.maxTs).toISOString()}; status codes ${Object.entries(c.statusCounts).map(([k, v]) => `${k}:${fmt(v)}`).join(' ')}`,
  ];
  if (r.retriedBackpressure > 0 || r.retriedTransport > 0) {
    lines.push(`          retried: ${r.retriedBackpressure} bodies after 503/429, ${r.retriedTransport} after transport errors${r.retriedTransport > 0 ? ' (those may be stored twice)' : ''}; first: ${r.firstError}`);
  }
  lines.push(
    `digest    ${d.complete ? 'everything in segments' : 'NOT everything in segments'} ${fmt(d.seconds, 1)} s after the last acknowledgement ` +
      `(undigestedBytes ${fmt(d.undigestedBytes)}, pendingBlockBytes ${fmt(d.pendingBlockBytes)}, ${fmt(d.segments)} segments); node RSS then ${mb(d.rssBytes)}`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * @param {import('./queries.mjs').QueryResult[]} qs
 * @param {string} start
 * @param {number} repeat
 */
export function queryTable(qs, start, repeat) {
  const lines = [
    `queries   start=${start}, best of ${repeat} (wall time from request to the answer's last byte; node CPU of that run)`,
    '  query                      best s  median s     raw MB/s      events/s  node CPU s  cores  MB/s per core  processed MB  answer',
  ];
  for (const q of qs) {
    const job = q.job !== null && !('error' in q.job) ? q.job : null;
    const errorRun = q.runs.find((r) => r.error !== null);
    const wrongRun = q.runs.find((r) => r.wrong !== null);
    const answer = errorRun !== undefined ? 'ERROR' : wrongRun !== undefined ? 'WRONG' : 'right';
    lines.push(
      `  ${q.name.padEnd(24)} ${fmt(q.bestSeconds, 3).padStart(8)} ${fmt(q.medianSeconds, 3).padStart(9)} ${fmt(q.rawMBps, 0).padStart(12)} ${fmt(q.eventsPerSec).padStart(13)} ` +
        `${fmt(q.bestCpuSeconds, 2).padStart(11)} ${fmt(q.cores, 2).padStart(6)} ${fmt(q.rawMBpsPerCore, 0).padStart(14)} ${(job === null ? 'n/a' : fmt(Number(job.processedBytes) / 1e6, 1)).padStart(13)}  ${answer}`,
    );
  }
  for (const q of qs) {
    const errorRun = q.runs.find((r) => r.error !== null);
    if (errorRun !== undefined) lines.push(`  ${q.name}: \`${q.queryString}\` failed: ${errorRun.error}`);
    const wrong = q.runs.filter((r) => r.wrong !== null);
    if (wrong.length > 0) lines.push(`  ${q.name}: \`${q.queryString}\` wrong in ${wrong.length} of ${q.runs.length} runs (${q.what}): ${wrong[0]?.wrong}`);
    if (q.job !== null && 'error' in q.job) lines.push(`  ${q.name}: as a query job: ${q.job.error}`);
    else if (q.job !== null) {
      const w = Array.isArray(q.job.warnings) && q.job.warnings.length > 0 ? `, warnings ${JSON.stringify(q.job.warnings).slice(0, 300)}` : '';
      lines.push(
        `  ${q.name.padEnd(24)} as a job: ${fmt(q.job.seconds, 3)} s (timeMillis ${q.job.timeMillis}), processedEvents ${fmt(Number(q.job.processedEvents))}, ` +
          `processedBytes ${fmt(Number(q.job.processedBytes))}, totalWork ${q.job.totalWork}${w}`,
      );
    }
  }
  const rss = qs.map((q) => q.rssMaxBytes).filter((v) => v !== null);
  if (rss.length > 0) lines.push(`  node RSS max during the queries: ${mb(Math.max(.../** @type {number[]} */ (rss)))}`);
  return `${lines.join('\n')}\n`;
}

/**
 * @param {{ files: number, bytes: number, complete: boolean, exit: string, stopMs: number } | null} stored
 * @param {import('./corpus.mjs').CorpusStats} c
 */
export function storedLine(stored, c) {
  if (stored === null) return '';
  return (
    `stored    ${mb(stored.bytes)} in ${stored.files} segment files after the node stopped (${stored.exit}, ${fmt(stored.stopMs / 1000, 1)} s): raw/stored ${fmt(c.rawBytes / stored.bytes, 2)}x` +
    `${stored.complete ? '' : '  (INCOMPLETE: the node did not stop cleanly)'}\n`
  );
}

/** @param {import('./limits.mjs').LimitsResult} l */
export function limitsBlock(l) {
  return [
    `limits    this process, one thread, over the node's ${l.files} segment files (${l.closedFiles} closed${l.damagedBytes > 0 ? `, ${fmt(l.damagedBytes)} bytes unreadable` : ''}), ${fmt(l.blocks)} blocks, ${fmt(l.events)} events, best of ${l.passes}`,
    `  LZ4 decompression   ${mb(l.compressedBytes)} -> ${mb(l.uncompressedBytes)} in ${fmt(l.decompressSeconds, 3)} s: in ${fmt(l.decompressInMBps)} MB/s, out ${fmt(l.decompressOutMBps)} MB/s, raw-equivalent ${fmt(l.decompressRawMBps)} MB/s`,
    `  Buffer.indexOf      "${RARE_TOKEN}" over ${mb(l.rawBytes)} of @rawstring in ${fmt(l.indexOfSeconds, 3)} s: ${fmt(l.indexOfMBps)} MB/s, ${l.rareHits} hits`,
    `  msgpack decode      ${fmt(l.unpackOutMBps)} MB/s of decompressed blocks (${fmt(l.unpackSeconds, 3)} s, once)`,
    `  decompress + indexOf on one core: ${fmt(l.scanRawMBps)} MB/s raw`,
    '',
  ].join('\n');
}

/**
 * Checks of the stored data and the targets.
 * @param {object} p
 * @param {import('./corpus.mjs').CorpusStats} p.corpus
 * @param {import('./queries.mjs').QueryResult[]} p.queries
 * @param {import('./limits.mjs').LimitsResult | null} p.limits
 * @param {boolean} p.possibleDuplicates
 * @param {string | null} p.rebuilt the build found at the end, when dist/ was rebuilt during the run
 */
export function summary(p) {
  /** @type {{ name: string, status: 'pass' | 'FAIL' | 'not measured', detail: string }[]} */
  const checks = [];
  /** @type {{ name: string, status: 'pass' | 'FAIL' | 'not measured', detail: string }[]} */
  const targets = [];
  /** @param {typeof checks} list @param {string} name @param {boolean | null} ok @param {string} detail */
  const add = (list, name, ok, detail) => list.push({ name, status: ok === null ? 'not measured' : ok ? 'pass' : 'FAIL', detail });
  const c = p.corpus;

  for (const q of p.queries) {
    const err = q.runs.find((r) => r.error !== null);
    const wrong = q.runs.find((r) => r.wrong !== null);
    add(checks, `${q.name} answer (${q.what})`, err !== undefined ? false : wrong === undefined, err !== undefined ? `error: ${err.error}` : wrong !== undefined ? `${wrong.wrong}` : `right in ${q.runs.length} of ${q.runs.length} runs`);
  }
  const l = p.limits;
  if (l !== null) {
    add(checks, 'segments hold every event', l.events === c.events, `${fmt(l.events)} in block headers, ${fmt(c.events)} ingested`);
    add(checks, 'segments hold every raw byte', l.rawBytes === c.rawBytes, `${fmt(l.rawBytes)} in raw columns, ${fmt(c.rawBytes)} ingested`);
    add(checks, 'the rare token is in the segments exactly as often as sent', l.rareHits === c.rareTimestamps.length, `${l.rareHits} found, ${c.rareTimestamps.length} sent`);
  }
  if (p.rebuilt !== null) checks.push({ name: 'WARNING', status: 'FAIL', detail: `dist/ was rebuilt during the run (now ${p.rebuilt}): the node may have run old and new code at once; repeat the run on a quiet tree` });
  if (p.possibleDuplicates) checks.push({ name: 'note', status: 'not measured', detail: 'bodies were resent after transport errors: counts may legitimately exceed the corpus' });

  const rareQ = p.queries.find((q) => q.name === 'rare token (free text)');
  const rareP = p.queries.find((q) => q.name === 'rare token (phrase)');
  const rareF = p.queries.find((q) => q.name === 'rare token (field)');
  const rareOk = rareQ?.ok === true && rareQ.rawMBps !== null;
  add(
    targets,
    `rare-token search >= ${fmt(TARGETS.rareTokenRawMBps)} MB/s raw`,
    rareOk ? /** @type {number} */ (rareQ.rawMBps) >= TARGETS.rareTokenRawMBps : null,
    `${rareQ?.rawMBps == null ? 'no right answer' : `${fmt(rareQ.rawMBps)} MB/s free text (${fmt(rareQ.bestSeconds, 3)} s)`}` +
      `${rareP?.rawMBps == null ? '' : `; phrase ${fmt(rareP.rawMBps)} MB/s (${fmt(rareP.bestSeconds, 3)} s)`}` +
      `${rareF?.rawMBps == null ? '' : `; field filter ${fmt(rareF.rawMBps)} MB/s (${fmt(rareF.bestSeconds, 3)} s)`}${rareQ !== undefined && !rareQ.ok && rareQ.rawMBps !== null ? ' (answer wrong: not counted)' : ''}`,
  );
  const countQ = p.queries.find((q) => q.name === 'count()');
  const perCore = countQ?.ok === true ? countQ.rawMBpsPerCore : null;
  const limit = l === null ? null : l.decompressRawMBps;
  add(
    targets,
    `count() per core used >= ${TARGETS.countShareOfDecompressPerCore * 100} % of single-thread LZ4 decompression (raw-equivalent)`,
    perCore === null || limit === null ? null : perCore >= TARGETS.countShareOfDecompressPerCore * limit,
    perCore === null || limit === null
      ? [
          countQ?.ok !== true ? 'count() gave no right answer' : null,
          countQ?.ok === true && perCore === null ? 'node CPU unknown (with --url, pass --pid)' : null,
          limit === null ? 'limits not measured' : null,
        ]
          .filter((x) => x !== null)
          .join('; ')
      : `${fmt(perCore)} MB/s per core (${fmt(countQ?.bestCpuSeconds, 2)} CPU s, ${fmt(countQ?.cores, 2)} cores) vs LZ4 ${fmt(limit)} MB/s: ${fmt((100 * perCore) / limit, 1)} %`,
  );

  const lines = ['checks'];
  for (const x of checks) lines.push(`  ${x.status.padEnd(12)} ${x.name}: ${x.detail}`);
  lines.push('', 'targets (this run)');
  for (const x of targets) lines.push(`  ${x.status.padEnd(12)} ${x.name}: ${x.detail}`);
  return { text: `${lines.join('\n')}\n`, checks, targets };
}
