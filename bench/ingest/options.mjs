/**
 * The ingest benchmark's command line: every option with its default, validated once (each problem
 * named, all reported together), then frozen.
 */
import { parseArgs } from 'node:util';
import { DATASET_NAMES } from '../lib/datasets.mjs';
import { numberOption } from '../lib/cli.mjs';

export const HELP = `Usage: node bench/ingest/run.mjs [options]

Ingest load against a logsvc node and, in the same run, against a bare uWebSockets.js server that
only reads and JSON.parses each body (the machine's limit). Prints events/s, MB/s, acknowledgement
latency, server RSS, event-loop delay and CPU, and for a spawned node the stored size.

Load
  --dataset NAME       accesslog | json | kv | all                          (default all)
  --mode MODE          structured | unstructured                            (default structured)
  --connections N      keep-alive connections, one request in flight each   (default 8)
  --batch N            events per request                                   (default 500)
  --gzip               send gzip-compressed bodies (Content-Encoding: gzip)
  --no-attributes      structured mode: send raw strings only, no parsed attributes
  --seconds S          measured window per phase                            (default 20)
  --warmup S           unmeasured load before the window                    (default 3)
  --rate N             events/s, open loop at a fixed rate; 0 = closed loop,
                       as fast as acknowledgements allow                    (default 0)
  --seed N             dataset seed; same seed, same bytes                  (default 1)
  --pool-events N      events pre-generated per dataset (bodies cycle)      (default 100000)

Targets
  --target T           node | parse-only | both (parse-only runs first)     (default both)
  --url URL            use a running node instead of spawning one (needs --token)
  --token TOKEN        ingest token for --url
  --admin-token TOKEN  root token for --url, to read its /api/v1/metrics
  --cpu-prof DIR       spawned node runs with --cpu-prof, profiles written to DIR
  --keep-data          keep the spawned node's temp dir (data dir, config) and print its path
  --node-config FILE   TOML appended to the spawned node's config (e.g. a Kafka queue, bench/ingest/kafka.mjs)

Output
  --out FILE           append the whole result as one JSON line
  --report FILE        the HTML report with plots (throughput, latency, CPU, RSS over time)
                       (default bench/reports/ingest-<date>.html)
  --help               this text

Examples
  node bench/ingest/run.mjs --dataset all --seconds 20
  node bench/ingest/run.mjs --dataset accesslog --target node --rate 40000   # p99 at a given load
`;

/**
 * @typedef {object} BenchOptions
 * @property {import('../lib/datasets.mjs').DatasetName[]} datasets
 * @property {'structured' | 'unstructured'} mode
 * @property {number} connections
 * @property {number} batch
 * @property {boolean} gzip
 * @property {boolean} attributes
 * @property {number} seconds
 * @property {number} warmup
 * @property {number} rate
 * @property {number} seed
 * @property {number} poolEvents
 * @property {('parse-only' | 'node')[]} targets in run order
 * @property {string | null} url
 * @property {string | null} token
 * @property {string | null} adminToken
 * @property {string | null} cpuProf
 * @property {boolean} keepData
 * @property {string | null} nodeConfig TOML appended to the spawned node's config (e.g. [queue] kind = "kafka")

 * @property {string | null} report
 * @property {string | null} out
 */

/**
 * @param {string[]} argv arguments after the script
 * @returns {{ help: true } | { help: false, options: BenchOptions } | { help: false, problems: string[] }}
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
        dataset: { type: 'string', default: 'all' },
        mode: { type: 'string', default: 'structured' },
        connections: { type: 'string', default: '8' },
        batch: { type: 'string', default: '500' },
        gzip: { type: 'boolean', default: false },
        'no-attributes': { type: 'boolean', default: false },
        seconds: { type: 'string', default: '20' },
        warmup: { type: 'string', default: '3' },
        rate: { type: 'string', default: '0' },
        seed: { type: 'string', default: '1' },
        'pool-events': { type: 'string', default: '100000' },
        target: { type: 'string', default: 'both' },
        url: { type: 'string' },
        token: { type: 'string' },
        'admin-token': { type: 'string' },
        'cpu-prof': { type: 'string' },
        'keep-data': { type: 'boolean', default: false },
        'node-config': { type: 'string' },
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

  const dataset = String(values.dataset);
  if (dataset !== 'all' && !DATASET_NAMES.includes(/** @type {any} */ (dataset))) problems.push(`--dataset: must be one of ${DATASET_NAMES.join(', ')}, all; got "${dataset}"`);
  const mode = String(values.mode);
  if (mode !== 'structured' && mode !== 'unstructured') problems.push(`--mode: must be structured or unstructured, got "${mode}"`);
  const target = String(values.target);
  if (target !== 'node' && target !== 'parse-only' && target !== 'both') problems.push(`--target: must be node, parse-only or both, got "${target}"`);
  const connections = num('connections', String(values.connections), 1, 1024, true);
  const batch = num('batch', String(values.batch), 1, 200_000, true);
  const seconds = num('seconds', String(values.seconds), 1, 3600, false);
  const warmup = num('warmup', String(values.warmup), 0, 600, false);
  const rate = num('rate', String(values.rate), 0, 1e8, false);
  const seed = num('seed', String(values.seed), 0, 2 ** 32 - 1, true);
  const poolEvents = num('pool-events', String(values['pool-events']), 1, 10_000_000, true);
  if (values['no-attributes'] && mode === 'unstructured') problems.push('--no-attributes: only applies to --mode structured');
  if (rate > 0 && rate < batch / 60) problems.push(`--rate: ${rate} events/s with --batch ${batch} sends less than one request a minute; lower --batch`);

  const url = values.url ?? null;
  const token = values.token ?? null;
  if (url !== null) {
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:') problems.push(`--url: only http:// is supported, got "${url}"`);
    } catch {
      problems.push(`--url: not a URL: "${url}"`);
    }
    if (token === null && target !== 'parse-only') problems.push('--url: needs --token (an ingest token of the repository to write to)');
  } else {
    if (token !== null) problems.push('--token: only with --url (a spawned node gets its own token)');
    if (values['admin-token'] !== undefined) problems.push('--admin-token: only with --url');
  }
  if (values['cpu-prof'] !== undefined && url !== null) problems.push('--cpu-prof: only for a spawned node, not with --url');
  if (values['keep-data'] && url !== null) problems.push('--keep-data: only for a spawned node, not with --url');
  if (values['node-config'] !== undefined && url !== null) problems.push('--node-config: only for a spawned node, not with --url');

  if (problems.length > 0) return { help: false, problems };
  /** @type {BenchOptions} */
  const options = {
    datasets: dataset === 'all' ? [...DATASET_NAMES] : [/** @type {import('../lib/datasets.mjs').DatasetName} */ (dataset)],
    mode: /** @type {'structured' | 'unstructured'} */ (mode),
    connections,
    batch,
    gzip: Boolean(values.gzip),
    attributes: !values['no-attributes'],
    seconds,
    warmup,
    rate,
    seed,
    poolEvents,
    targets: target === 'both' ? ['parse-only', 'node'] : [/** @type {'parse-only' | 'node'} */ (target)],
    url: url === null ? null : url.replace(/\/+$/, ''),
    token,
    adminToken: values['admin-token'] ?? null,
    cpuProf: values['cpu-prof'] ?? null,
    keepData: Boolean(values['keep-data']),
    nodeConfig: values['node-config'] ?? null,
    out: values.out ?? null,
    report: values.report ?? null,
  };
  return { help: false, options: Object.freeze(options) };
}
