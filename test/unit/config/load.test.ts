import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, OPTIONS, buildConfig, effectiveExternalUrl, loadConfig, type NodeConfig } from '../../../src/config/index.js';
import { LogsvcError } from '../../../src/lib/errors.js';

const DEFAULTS = {
  node: { id: 1, name: '', host: '127.0.0.1', port: 8080, data_dir: './data', external_url: '', log_level: 'info' },
  http: { max_body_bytes: 33554432, max_inflight_body_bytes: 536870912, max_api_body_bytes: 1048576, max_decompressed_bytes: 134217728, max_header_bytes: 16384, max_json_depth: 64 },
  ingest: {
    max_events_per_request: 200000,
    max_event_bytes: 1048576,
    max_fields_per_event: 1000,
    max_datasources_per_repository: 10000,
    offload_bytes: 16384,
    max_undigested_bytes: 2147483648,
    max_digest_backlog_bytes: 134217728,
  },
  graphql: { max_depth: 12, max_complexity: 2000, explorer: true },
  health: {
    grace_period_seconds: 30,
    check_interval_seconds: 5,
    disk_warn_percent: 90,
    disk_down_percent: 97,
    secondary_data_dir: '',
    backup_dir: '',
    event_latency_warn_seconds: 30,
    event_latency_down_seconds: 600,
  },
  state: { snapshot_every_events: 1000 },
  digest: {
    partitions: 24,
    flush_block_seconds: 1800,
    blocks_per_segment: 2000,
    max_hours_segment_open: 24,
    block_target_bytes: 1048576,
    open_block_budget_bytes: 268435456,
    worker_threads: 0,
    block_build_nice: 10,
  },
  query: {
    max_concurrent: 16, max_concurrent_per_user: 8, queue_timeout_ms: 10000, max_queued: 1000, large_query_bytes: 268435456,
    max_query_seconds: 300,
    max_groups: 1000000,
    max_rows: 200000,
    max_query_memory_bytes: 268435456,
    max_total_query_memory_bytes: 1073741824,
    job_idle_seconds: 30,
    live_job_idle_seconds: 3600,
    max_jobs: 1000,
    task_bytes: 16777216,
    geoip_file: '',
    asn_file: '',
    ioc_file: '',
    rdns_enabled: true,
    rdns_server: '',
    rdns_timeout_ms: 5000,
    rdns_concurrency: 10,
    rdns_requests_per_second: 100,
    rdns_max_limit: 20000,
  },
  files: { max_file_bytes: 104857600, max_rows: 1000000, max_files_per_repository: 1000, max_total_bytes: 10737418240, cache_bytes: 1073741824 },
  parsers: { max_event_ms: 50, max_request_ms: 10000, max_per_repository: 200 },
  listeners: { max_listeners: 100, max_connections: 1000, max_message_bytes: 65536, udp_max_pending_bytes: 8388608, batch_linger_ms: 20 },
  alerts: {
    enabled: true,
    evaluate_interval_ms: 5000,
    max_concurrent_evaluations: 2,
    max_concurrent_deliveries: 8,
    query_timeout_ms: 60000,
    action_timeout_ms: 10000,
    action_retries: 3,
    retry_backoff_ms: 1000,
    max_response_bytes: 65536,
    max_message_events: 200,
    max_message_bytes: 1048576,
    max_alerts_per_repository: 1000,
    max_actions_per_repository: 1000,
    allow_targets: [] as string[],
    pagerduty_url: 'https://events.pagerduty.com/v2/enqueue',
    smtp_host: '',
    smtp_port: 25,
    smtp_secure: false,
    smtp_username: '',
    smtp_password: '',
    smtp_sender: 'logsvc@localhost',
  },
  queue: { kind: 'embedded', file_bytes: 8388608 },
  kafka: { brokers: '', topic_prefix: '', topic_replication_factor: 0, min_insync_replicas: 0, delivery_timeout_ms: 10_000, request_timeout_ms: 5000, properties: Object.create(null) as Record<string, never> },
  cluster: { listen: '', advertise: '', peers: [], heartbeat_interval_ms: 1000, failure_timeout_ms: 5000, segment_replication_factor: 2, replication_bytes_per_second: 100 * 1024 * 1024, replication_parallel_transfers: 2, replication_outbound_bytes_per_second: 100 * 1024 * 1024, replication_outbound_parallel_transfers: 4, rereplicate_after_seconds: 300, scrub_bytes_per_second: 8 * 1024 * 1024, scrub_interval_seconds: 86400, secret: '', secret_file: '', insecure_loopback: false },

  metrics: { enabled: true, open_on_loopback: true, token: '' },
  ui: { enabled: true },
  self_logs: { enabled: true, level: 'info', retention_days: 30, buffer_lines: 10_000 },
  retention: {
    interval_seconds: 60,
    default_time_days: 0,
    default_ingest_gb: 0,
    default_storage_gb: 0,
    disk_watermark_percent: 0,
  },
};

async function tempFile(t: { teardown: (fn: () => unknown) => void }, name: string, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const p = join(dir, name);
  await writeFile(p, content);
  return p;
}

async function configError(p: Promise<unknown>): Promise<ConfigError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

t.test('defaults', async (t) => {
  const { config, problems } = buildConfig({});
  t.strictSame(problems, []);
  t.strictSame(config, DEFAULTS);
  t.strictSame(await loadConfig(undefined), DEFAULTS, 'no file: the defaults');
});

t.test('the option table is well formed', async (t) => {
  const paths = OPTIONS.map((o) => o.path);
  t.equal(new Set(paths).size, paths.length, 'paths are unique');
  t.strictSame(
    paths,
    Object.entries(DEFAULTS).flatMap(([s, keys]) => Object.keys(keys).map((k) => `${s}.${k}`)),
    'exactly the documented options, in order',
  );
  for (const o of OPTIONS) {
    t.match(o.path, /^[a-z][a-z_]*\.[a-z_]+$/, `${o.path}: section.key`);
    t.ok(o.doc.length > 10, `${o.path}: documented`);
    t.strictSame(o.check(o.default), o.default, `${o.path}: the default passes its own check`);
    const [s, k] = o.path.split('.') as [keyof typeof DEFAULTS, string];
    t.strictSame((DEFAULTS[s] as Record<string, unknown>)[k], o.default, `${o.path}: default`);
  }
});

t.test('file values are used', async (t) => {
  const { config, problems } = buildConfig({
    node: { id: 7, name: 'seven', host: '::1', port: 0, data_dir: '/var/lib/logsvc', external_url: 'https://logs.example.com/', log_level: 'debug' },
    graphql: { explorer: false },
    health: { disk_warn_percent: 50, disk_down_percent: 50 },
  });
  t.strictSame(problems, []);
  t.strictSame(config.node, { id: 7, name: 'seven', host: '::1', port: 0, data_dir: '/var/lib/logsvc', external_url: 'https://logs.example.com/', log_level: 'debug' });
  t.equal(config.graphql.explorer, false);
  t.equal(config.health.disk_warn_percent, 50);
  t.equal(config.health.disk_down_percent, 50, 'down == warn is allowed');
  t.strictSame(config.http, DEFAULTS.http, 'untouched sections keep their defaults');
});

t.test('unknown keys and sections name the key path', async (t) => {
  t.strictSame(buildConfig({ node: { prot: 80 } }).problems, ['node.prot: unknown key']);
  t.strictSame(buildConfig({ nodes: { port: 80 } }).problems, ['nodes: unknown section']);
  t.strictSame(buildConfig({ node: { tls: { cert: 'x' } } }).problems, ['node.tls: unknown key'], 'a sub-table is an unknown key');
  t.strictSame(buildConfig({ node: 5 }).problems, ['node: must be a [node] table']);
  t.strictSame(buildConfig({ health: [{ a: 1 }] }).problems, ['health: must be a [health] table']);
  t.strictSame(buildConfig({ node: null } as unknown as Record<string, unknown>).problems, ['node: must be a [node] table']);
  t.strictSame(buildConfig({}, { 'node.prot': 80 }).problems, ['node.prot: unknown key'], 'unknown override');
  t.strictSame(buildConfig({}, { port: 80 }).problems, ['port: unknown key'], 'an override needs the full path');
});

t.test('wrong types and out-of-range values name the path and the bad value', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ node: { port: '8080' } }, 'node.port: must be an integer from 0 to 65535 (got "8080")'],
    [{ node: { port: 65536 } }, 'node.port: must be an integer from 0 to 65535 (got 65536)'],
    [{ node: { port: -1 } }, 'node.port: must be an integer from 0 to 65535 (got -1)'],
    [{ node: { id: 0 } }, 'node.id: must be an integer from 1 to 65535 (got 0)'],
    [{ node: { id: 2.5 } }, 'node.id: must be an integer from 1 to 65535 (got 2.5)'],
    [{ node: { id: true } }, 'node.id: must be an integer from 1 to 65535 (got true)'],
    [{ node: { name: 5 } }, 'node.name: must be a string (got 5)'],
    [{ node: { host: 'bad host' } }, 'node.host: must be a host name or IP address (got "bad host")'],
    [{ node: { external_url: 'ftp://x' } }, 'node.external_url: must be an http(s) URL (got "ftp://x")'],
    [{ node: { external_url: 'http://' } }, 'node.external_url: must be an http(s) URL (got "http://")'],
    [{ node: { log_level: 'verbose' } }, 'node.log_level: must be one of debug, info, warn, error (got "verbose")'],
    [{ node: { log_level: 1 } }, 'node.log_level: must be one of debug, info, warn, error (got 1)'],
    [{ node: { data_dir: ['a'] } }, 'node.data_dir: must be a string (got ["a"])'],
    [{ graphql: { explorer: 'yes' } }, 'graphql.explorer: must be true or false (got "yes")'],
    [{ http: { max_body_bytes: 1023 } }, 'http.max_body_bytes: must be an integer from 1024 to 1073741824 (got 1023)'],
    [{ http: { max_json_depth: 1001 } }, 'http.max_json_depth: must be an integer from 2 to 1000 (got 1001)'],
    [{ health: { disk_warn_percent: 101 } }, 'health.disk_warn_percent: must be an integer from 1 to 100 (got 101)'],
    [{ state: { snapshot_every_events: 0 } }, 'state.snapshot_every_events: must be an integer from 1 to 10000000 (got 0)'],
    [{ digest: { partitions: 1025 } }, 'digest.partitions: must be an integer from 1 to 1024 (got 1025)'],
    [{ health: { backup_dir: { a: 1 } } }, 'health.backup_dir: must be a string (got {"a":1})'],
    [{ digest: { worker_threads: 257 } }, 'digest.worker_threads: must be an integer from 0 to 256 (got 257)'],
    [{ digest: { block_build_nice: 20 } }, 'digest.block_build_nice: must be an integer from 0 to 19 (got 20)'],
    [{ ingest: { max_digest_backlog_bytes: 1000 } }, 'ingest.max_digest_backlog_bytes: must be an integer from 1048576 to 1099511627776 (got 1000)'],
    [{ ingest: { max_undigested_bytes: 1048575 } }, 'ingest.max_undigested_bytes: must be an integer from 1048576 to 1099511627776 (got 1048575)'],
  ];
  for (const [raw, problem] of cases) {
    const { config, problems } = buildConfig(raw);
    t.strictSame(problems, [problem], problem);
    t.strictSame(config, DEFAULTS, `${problem}: the bad value is not used`);
  }
  // boundaries are accepted
  t.strictSame(buildConfig({ node: { port: 65535, id: 65535 } }).problems, []);
  t.strictSame(buildConfig({ node: { port: 0, id: 1 } }).problems, []);
  t.strictSame(buildConfig({ http: { max_json_depth: 2 } }).problems, []);
  t.strictSame(buildConfig({ digest: { worker_threads: 0 } }).problems, []);
});

t.test('node.data_dir must not be empty', async (t) => {
  // The validator is text(/^.+$/, 'a non-empty path'), so "" is meant to be refused: an empty data dir
  // silently resolves to the working directory.
  t.strictSame(buildConfig({ node: { data_dir: '' } }).problems, ['node.data_dir: must be a non-empty path (got "")']);
  t.strictSame(buildConfig({}, { 'node.data_dir': '' }).problems, ['node.data_dir: must be a non-empty path (got "")'], 'from --data-dir ""');
});

t.test('a non-numeric --port (NaN from the CLI) is reported with the value given', async (t) => {
  const { problems } = buildConfig({}, { 'node.port': Number('abc') });
  t.equal(problems.length, 1);
  t.match(problems[0], /^node\.port: must be an integer from 0 to 65535 \(got NaN\)$/);
});

t.test('several problems are all reported at once, in a stable order', async (t) => {
  const { problems } = buildConfig(
    {
      bogus: { a: 1 },
      node: { prot: 1, port: 'x', log_level: 'loud' },
      http: { max_json_depth: 1 },
      graphql: 7,
    },
    { 'node.colour': 'red', 'node.id': 0 },
  );
  t.strictSame(problems, [
    'bogus: unknown section',
    'node.prot: unknown key',
    'graphql: must be a [graphql] table',
    'node.colour: unknown key',
    'node.id: must be an integer from 1 to 65535 (got 0)',
    'node.port: must be an integer from 0 to 65535 (got "x")',
    'node.log_level: must be one of debug, info, warn, error (got "loud")',
    'http.max_json_depth: must be an integer from 2 to 1000 (got 1)',
  ]);
});

t.test('a cross-option rule is reported together with unrelated problems', async (t) => {
  // load.ts promises every problem, cross-option rules included, is reported together.
  const { problems } = buildConfig({ node: { prot: 1 }, health: { disk_warn_percent: 95, disk_down_percent: 80 } });
  t.strictSame(problems, ['node.prot: unknown key', 'health.disk_down_percent: must not be below health.disk_warn_percent (95)']);
});

t.test('cross checks', async (t) => {
  t.strictSame(buildConfig({ health: { disk_warn_percent: 95, disk_down_percent: 80 } }).problems, [
    'health.disk_down_percent: must not be below health.disk_warn_percent (95)',
  ]);
  t.strictSame(buildConfig({ health: { disk_down_percent: 89 } }).problems, ['health.disk_down_percent: must not be below health.disk_warn_percent (90)'], 'against the default');
  t.strictSame(buildConfig({ health: { event_latency_warn_seconds: 700 } }).problems, [
    'health.event_latency_down_seconds: must not be below health.event_latency_warn_seconds (700)',
  ]);
  t.strictSame(buildConfig({ health: { disk_warn_percent: 99, disk_down_percent: 98, event_latency_warn_seconds: 10, event_latency_down_seconds: 5 } }).problems, [
    'health.disk_down_percent: must not be below health.disk_warn_percent (99)',
    'health.event_latency_down_seconds: must not be below health.event_latency_warn_seconds (10)',
  ]);
  t.strictSame(buildConfig({ health: { event_latency_warn_seconds: 600 } }).problems, [], 'equal is allowed');
  const e = await configError(loadConfig(undefined, { 'health.disk_down_percent': 10 }));
  t.equal(e.message, 'configuration: 1 problem(s): health.disk_down_percent: must not be below health.disk_warn_percent (90)');
});

t.test('overrides win over file values', async (t) => {
  const file = await tempFile(t, 'c.toml', '[node]\nport = 9000\nhost = "0.0.0.0"\ndata_dir = "/from/file"\n');
  const c = await loadConfig(file, { 'node.port': 0, 'node.host': undefined, 'node.data_dir': '/from/cli' });
  t.equal(c.node.port, 0, 'override 0 wins over 9000');
  t.equal(c.node.host, '0.0.0.0', 'an undefined override leaves the file value');
  t.equal(c.node.data_dir, '/from/cli');
  t.strictSame(buildConfig({ node: { port: 9000 } }, { 'node.port': 1234 }).config.node.port, 1234);
  t.strictSame(buildConfig({}, { 'node.port': 0 }).config.node.port, 0);
  t.strictSame(buildConfig({ node: { port: 'bad' } }, { 'node.port': 1 }).problems, [], 'a valid override replaces a bad file value');
  const e = await configError(loadConfig(file, { 'node.port': 70000 }));
  t.strictSame(e.problems, ['node.port: must be an integer from 0 to 65535 (got 70000)'], 'overrides are validated too');
});

t.test('loadConfig reads a file; errors are ConfigErrors', async (t) => {
  const good = await tempFile(t, 'good.toml', '[graphql]\nexplorer = false\n[digest]\npartitions = 48\n');
  const c = await loadConfig(good);
  t.equal(c.graphql.explorer, false);
  t.equal(c.digest.partitions, 48);
  t.equal(c.node.port, 8080);

  const bad = await tempFile(t, 'bad.toml', '[node]\nport = 80\nid = "x"\n[nope]\n');
  const e = await configError(loadConfig(bad));
  t.ok(e instanceof LogsvcError);
  t.equal(e.code, 'E_CONFIG_INVALID');
  t.equal(e.httpStatus, 500);
  t.strictSame(e.problems, ['nope: unknown section', 'node.id: must be an integer from 1 to 65535 (got "x")']);
  t.equal(e.message, `${bad}: 2 problem(s): nope: unknown section; node.id: must be an integer from 1 to 65535 (got "x")`);
});

t.test('invalid TOML is one problem', async (t) => {
  for (const text of ['[node\nport = 1\n', 'port = = 1\n', '[node]\nport = 1\nport = 2\n', '[node]\nname = "unterminated\n']) {
    const file = await tempFile(t, 'x.toml', text);
    const e = await configError(loadConfig(file));
    t.equal(e.code, 'E_CONFIG_INVALID');
    t.equal(e.problems.length, 1, JSON.stringify(text));
    t.match(e.problems[0], /^not valid TOML: \S/);
    t.notMatch(e.problems[0], /\n/, 'one line');
    t.ok(e.message.startsWith(`${file}: 1 problem(s): not valid TOML: `));
  }
});

t.test('a missing or unreadable file is a ConfigError', async (t) => {
  const file = await tempFile(t, 'x.toml', '');
  const missing = join(file, '..', 'missing.toml');
  const e = await configError(loadConfig(missing));
  t.equal(e.code, 'E_CONFIG_INVALID');
  t.strictSame(e.problems, ['cannot read the file (ENOENT)']);
  t.equal(e.message, `${missing}: 1 problem(s): cannot read the file (ENOENT)`);
  const dir = join(file, '..');
  const d = await configError(loadConfig(dir));
  t.strictSame(d.problems, ['cannot read the file (EISDIR)']);
  t.strictSame(await loadConfig(file), DEFAULTS, 'an empty file is the defaults');
});

t.test('the returned config is frozen', async (t) => {
  const { config } = buildConfig({ node: { port: 1 } });
  const c = await loadConfig(undefined);
  for (const cfg of [config, c]) {
    t.ok(Object.isFrozen(cfg));
    for (const section of Object.values(cfg)) t.ok(Object.isFrozen(section));
    t.throws(() => {
      (cfg.node as { port: number }).port = 1;
    }, TypeError);
    t.throws(() => {
      (cfg as unknown as Record<string, unknown>).node = {};
    }, TypeError);
    t.throws(() => {
      (cfg as unknown as Record<string, unknown>).extra = 1;
    }, TypeError);
  }
  t.equal(config.node.port, 1);
  t.equal(c.node.port, 8080);
  // Freezing one result does not freeze the defaults for the next one
  t.equal(buildConfig({ node: { port: 2 } }).config.node.port, 2);
  t.strictSame(buildConfig({}).config, DEFAULTS);
});

t.test('effectiveExternalUrl', async (t) => {
  const cfg = (node: Partial<NodeConfig['node']>): NodeConfig => {
    const { config, problems } = buildConfig({ node });
    if (problems.length > 0) throw new Error(problems.join('; '));
    return config;
  };
  t.equal(effectiveExternalUrl(cfg({}), 8080), 'http://127.0.0.1:8080');
  t.equal(effectiveExternalUrl(cfg({ port: 0 }), 41234), 'http://127.0.0.1:41234', 'the actual port, not the configured 0');
  t.equal(effectiveExternalUrl(cfg({ host: '::1' }), 9000), 'http://[::1]:9000');
  t.equal(effectiveExternalUrl(cfg({ host: '[::1]' }), 9000), 'http://[::1]:9000');
  t.equal(effectiveExternalUrl(cfg({ host: 'logs.local' }), 1), 'http://logs.local:1');
  t.equal(effectiveExternalUrl(cfg({ external_url: 'https://logs.example.com//' }), 1), 'https://logs.example.com');
  t.equal(effectiveExternalUrl(cfg({ external_url: 'https://x.example.com/base/' }), 1), 'https://x.example.com/base');
});

t.test('alerts.allow_targets: a list of CIDR blocks', async (t) => {
  t.strictSame(buildConfig({ alerts: { allow_targets: ['127.0.0.1/32', '10.0.0.0/8', '::1', 'fd00::/8'] } }).problems, []);
  t.strictSame(buildConfig({ alerts: { allow_targets: ['127.0.0.1'] } }).config.alerts.allow_targets, ['127.0.0.1'], 'a bare address is one host');
  const cases: [unknown, RegExp][] = [
    ['127.0.0.1/32', /^alerts\.allow_targets: must be an array of CIDR blocks/],
    [[5], /^alerts\.allow_targets: entries must be strings/],
    [['localhost'], /^alerts\.allow_targets: "localhost" is not an IP address or CIDR block/],
    [['10.0.0.0/33'], /^alerts\.allow_targets: "10\.0\.0\.0\/33": the prefix length must be 0 to 32/],
    [['::1/129'], /prefix length must be 0 to 128/],
    [['10.0.0.0/x'], /prefix length/],
  ];
  for (const [value, message] of cases) {
    const { problems } = buildConfig({ alerts: { allow_targets: value } });
    t.equal(problems.length, 1, JSON.stringify(value));
    t.match(problems[0], message);
  }
});
