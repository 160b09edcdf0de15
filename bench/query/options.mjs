/**
 * The query benchmark's command line: every option with its default, validated once (each problem
 * named, all reported together), then frozen.
 */
import { parseArgs } from 'node:util';
import { numberOption } from '../lib/cli.mjs';

/** The rare token: letters no dataset vocabulary holds together (not hex, not a name), so it appears only in the rare events. */
export const RARE_TOKEN = 'zq7xk2vblm';

export const HELP = `Usage: node bench/query/run.mjs [options]

Ingests an access-log corpus of at least --corpus-mb MB of raw text through the real HTTP API, with
timestamps spread evenly over the last --hours hours and --rare events holding the token
"${RARE_TOKEN}", waits until the node has written everything to segments, then times a rare-token
search (free text and field filter), count(), groupBy(statuscode) and timechart() over the whole
corpus, checking every answer. In the same run it measures the machine's limits over the very
segment files the node wrote: LZ4 decompression and Buffer.indexOf of the rare token, one thread.

Corpus
  --corpus-mb N        raw (@rawstring) megabytes to ingest, 10^6 bytes         (default 2048)
  --hours H            timestamps spread over the last H hours, 0 < H <= 23     (default 20)
  --rare N             events carrying the rare token, spread over the range    (default 20)
  --seed N             dataset seed; same seed, same lines                      (default 1)
  --connections N      keep-alive ingest connections                            (default 8)
  --batch N            events per ingest request                                (default 1000)

Queries
  --repeat N           timed runs of each query; best and median are reported   (default 3)
  --query-timeout S    longest wait for one query answer                        (default 600)

Node
  --url URL            use a running node instead of spawning one (needs --admin-token)
  --admin-token TOKEN  with --url: a root token (creates the repository, queries, reads metrics)
  --token TOKEN        with --url: an ingest token of --repo (default: the one createRepository returns)
  --repo NAME          repository to create and fill; must not exist yet           (default bench)
  --pid PID            with --url: the node's process id, to read its CPU time from /proc
  --data-dir DIR       with --url: the node's data dir, to measure the limits over its segments
  --cpu-prof DIR       spawned node runs with --cpu-prof, profiles written to DIR
  --keep-data          keep the spawned node's temp dir (data dir, config) and print its path

Run
  --no-limits          skip the machine-limit measurement
  --digest-timeout S   longest wait for the node to write everything to segments (default 600)
  --budget-minutes M   the whole run's time budget      (default 15 + corpus-mb / 100, in minutes)
  --out FILE           append the whole result as one JSON line
  --report FILE        the HTML report with plots (default bench/reports/query-<date>.html)
  --help               this text

Examples
  node bench/query/run.mjs --corpus-mb 50                  # a quick check of the harness and the node
  node bench/query/run.mjs --out results.jsonl             # the issue's benchmark: 2 GB raw
`;

/**
 * @typedef {object} QueryBenchOptions
 * @property {number} corpusMb
 * @property {number} hours
 * @property {number} rare
 * @property {number} seed
 * @property {number} connections
 * @property {number} batch
 * @property {number} repeat
 * @property {number} queryTimeoutS
 * @property {string | null} url
 * @property {string | null} adminToken
 * @property {string | null} token
 * @property {string} repo
 * @property {number | null} pid
 * @property {string | null} dataDir
 * @property {string | null} cpuProf
 * @property {boolean} keepData
 * @property {boolean} limits
 * @property {number} digestTimeoutS
 * @property {number} budgetMinutes
 * @property {string | null} out
 * @property {string | null} report
 */

/**
 * @param {string[]} argv
 * @returns {{ help: true } | { help: false, problems: string[] } | { help: false, options: Readonly<QueryBenchOptions> }}
 */
export function parseOptions(argv) {
  /** @type {string[]} */
  const problems = [];
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'corpus-mb': { type: 'string', default: '2048' },
        hours: { type: 'string', default: '20' },
        rare: { type: 'string', default: '20' },
        seed: { type: 'string', default: '1' },
        connections: { type: 'string', default: '8' },
        batch: { type: 'string', default: '1000' },
        repeat: { type: 'string', default: '3' },
        'query-timeout': { type: 'string', default: '600' },
        url: { type: 'string' },
        'admin-token': { type: 'string' },
        token: { type: 'string' },
        repo: { type: 'string', default: 'bench' },
        pid: { type: 'string' },
        'data-dir': { type: 'string' },
        'cpu-prof': { type: 'string' },
        'keep-data': { type: 'boolean', default: false },
        'no-limits': { type: 'boolean', default: false },
        'digest-timeout': { type: 'string', default: '600' },
        'budget-minutes': { type: 'string' },
        out: { type: 'string' },
        report: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    return { help: false, problems: [/** @type {Error} */ (err).message] };
  }
  if (values.help) return { help: true };

  const num = numberOption(problems);

  const corpusMb = num('corpus-mb', String(values['corpus-mb']), 1, 1_000_000, false);
  const hours = num('hours', String(values.hours), 0.01, 23, false);
  const rare = num('rare', String(values.rare), 1, 1000, true);
  const seed = num('seed', String(values.seed), 0, 2 ** 32 - 1, true);
  const connections = num('connections', String(values.connections), 1, 256, true);
  const batch = num('batch', String(values.batch), 1, 100_000, true);
  const repeat = num('repeat', String(values.repeat), 1, 100, true);
  const queryTimeoutS = num('query-timeout', String(values['query-timeout']), 1, 86_400, false);
  const digestTimeoutS = num('digest-timeout', String(values['digest-timeout']), 1, 86_400, false);
  const budgetMinutes = values['budget-minutes'] === undefined ? Math.ceil(15 + corpusMb / 100) : num('budget-minutes', String(values['budget-minutes']), 1, 10_000, false);
  // Each rare event must get its own stretch of the corpus (an access-log line is about 217 bytes).
  if (corpusMb * 1e6 < rare * 4096) problems.push(`--rare: ${rare} rare events need a corpus of at least ${Math.ceil((rare * 4096) / 1e6)} MB`);
  const repo = String(values.repo);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(repo)) problems.push(`--repo: not a repository name: "${repo}"`);

  const url = values.url ?? null;
  if (url !== null) {
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:') problems.push(`--url: only http:// is supported, got "${url}"`);
    } catch {
      problems.push(`--url: not a URL: "${url}"`);
    }
    if (values['admin-token'] === undefined) problems.push('--url: needs --admin-token (a root token: it creates the repository, queries and reads metrics)');
    if (values['cpu-prof'] !== undefined) problems.push('--cpu-prof: only for a spawned node, not with --url');
    if (values['keep-data']) problems.push('--keep-data: only for a spawned node, not with --url');
  } else {
    for (const o of ['admin-token', 'token', 'pid', 'data-dir']) if (/** @type {any} */ (values)[o] !== undefined) problems.push(`--${o}: only with --url (a spawned node is known to the run)`);
  }
  const pid = values.pid === undefined ? null : num('pid', String(values.pid), 1, 2 ** 31, true);

  if (problems.length > 0) return { help: false, problems };
  /** @type {QueryBenchOptions} */
  const options = {
    corpusMb,
    hours,
    rare,
    seed,
    connections,
    batch,
    repeat,
    queryTimeoutS,
    url: url === null ? null : url.replace(/\/+$/, ''),
    adminToken: values['admin-token'] ?? null,
    token: values.token ?? null,
    repo,
    pid,
    dataDir: values['data-dir'] ?? null,
    cpuProf: values['cpu-prof'] ?? null,
    keepData: Boolean(values['keep-data']),
    limits: !values['no-limits'],
    digestTimeoutS,
    budgetMinutes,
    out: values.out ?? null,
    report: values.report ?? null,
  };
  return { help: false, options: Object.freeze(options) };
}
