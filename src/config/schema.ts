import { parseCidr } from '../lib/cidr.js';

/**
 * Every configuration option: its key path, default, one-line doc and validator. This table is the
 * single source of truth: the loader validates against it, `cluster.example.toml` documents every
 * entry (a unit test keeps the two in step), and nothing else reads raw TOML.
 */

export interface NodeConfig {
  node: { id: number; name: string; host: string; port: number; data_dir: string; external_url: string; log_level: 'debug' | 'info' | 'warn' | 'error' };
  http: { max_body_bytes: number; max_api_body_bytes: number; max_inflight_body_bytes: number; max_decompressed_bytes: number; max_header_bytes: number; max_json_depth: number };
  ingest: {
    max_events_per_request: number;
    max_event_bytes: number;
    max_fields_per_event: number;
    max_datasources_per_repository: number;
    max_undigested_bytes: number;
    max_digest_backlog_bytes: number;
    offload_bytes: number;
  };
  graphql: { max_depth: number; max_complexity: number; explorer: boolean };
  health: {
    grace_period_seconds: number;
    check_interval_seconds: number;
    disk_warn_percent: number;
    disk_down_percent: number;
    secondary_data_dir: string;
    backup_dir: string;
    event_latency_warn_seconds: number;
    event_latency_down_seconds: number;
  };
  state: { snapshot_every_events: number };
  digest: {
    partitions: number;
    flush_block_seconds: number;
    blocks_per_segment: number;
    max_hours_segment_open: number;
    block_target_bytes: number;
    open_block_budget_bytes: number;
    worker_threads: number;
    block_build_nice: number;
  };
  query: {
    max_concurrent: number;
    max_concurrent_per_user: number;
    queue_timeout_ms: number;
    max_queued: number;
    large_query_bytes: number;
    max_query_seconds: number;
    max_groups: number;
    max_rows: number;
    max_query_memory_bytes: number;
    max_total_query_memory_bytes: number;
    job_idle_seconds: number;
    live_job_idle_seconds: number;
    max_jobs: number;
    task_bytes: number;
    geoip_file: string;
    asn_file: string;
    ioc_file: string;
    rdns_enabled: boolean;
    rdns_server: string;
    rdns_timeout_ms: number;
    rdns_concurrency: number;
    rdns_requests_per_second: number;
    rdns_max_limit: number;
  };
  files: { max_file_bytes: number; max_rows: number; max_files_per_repository: number; max_total_bytes: number; cache_bytes: number };
  parsers: { max_event_ms: number; max_request_ms: number; max_per_repository: number };
  listeners: { max_listeners: number; max_connections: number; max_message_bytes: number; udp_max_pending_bytes: number; batch_linger_ms: number };
  alerts: {
    enabled: boolean;
    evaluate_interval_ms: number;
    max_concurrent_evaluations: number;
    max_concurrent_deliveries: number;
    query_timeout_ms: number;
    action_timeout_ms: number;
    action_retries: number;
    retry_backoff_ms: number;
    max_response_bytes: number;
    max_message_events: number;
    max_message_bytes: number;
    max_alerts_per_repository: number;
    max_actions_per_repository: number;
    allow_targets: string[];
    pagerduty_url: string;
    smtp_host: string;
    smtp_port: number;
    smtp_secure: boolean;
    smtp_username: string;
    smtp_password: string;
    smtp_sender: string;
  };
  queue: { kind: 'embedded' | 'kafka'; file_bytes: number };
  kafka: {
    brokers: string;
    topic_prefix: string;
    topic_replication_factor: number;
    min_insync_replicas: number;
    delivery_timeout_ms: number;
    request_timeout_ms: number;
    properties: Record<string, string | number | boolean>;
  };
  cluster: {
    listen: string;
    advertise: string;
    peers: string[];
    heartbeat_interval_ms: number;
    failure_timeout_ms: number;
    segment_replication_factor: number;
    replication_bytes_per_second: number;
    replication_parallel_transfers: number;
    replication_outbound_bytes_per_second: number;
    replication_outbound_parallel_transfers: number;
    rereplicate_after_seconds: number;
    scrub_bytes_per_second: number;
    scrub_interval_seconds: number;
    secret: string;
    secret_file: string;
    insecure_loopback: boolean;
  };

  metrics: { enabled: boolean; open_on_loopback: boolean; token: string };
  ui: { enabled: boolean };
  self_logs: { enabled: boolean; level: 'debug' | 'info' | 'warn' | 'error'; retention_days: number; buffer_lines: number };
  retention: {
    interval_seconds: number;
    default_time_days: number;
    default_ingest_gb: number;
    default_storage_gb: number;
    disk_watermark_percent: number;
  };
}

/** A validator returns the accepted value, or a string describing what is wrong. */
type Check<T> = (value: unknown) => T | { error: string };

export interface OptionSpec {
  path: string;
  default: unknown;
  doc: string;
  check: Check<unknown>;
}

const show = (v: unknown): string => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? String(v)));

export function integer(min: number, max: number): Check<number> {
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? v
      : { error: `must be an integer from ${min} to ${max} (got ${show(v)})` };
}

/** 0 (off) or an integer from `min` to `max`. */
export function zeroOrAtLeast(min: number, max: number): Check<number> {
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && (v === 0 || (v >= min && v <= max))
      ? v
      : { error: `must be 0 or an integer from ${min} to ${max} (got ${show(v)})` };
}

/** A secret: empty (not set) or 16 to 1024 characters without spaces; a refusal never shows the value. */
export function secretText(): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: 'must be a string' };
    if (v !== '' && !/^\S{16,1024}$/.test(v)) return { error: `must be 16 to 1024 characters without spaces (got ${v.length} characters; the value is not shown)` };
    return v;
  };
}

/** A string; with a pattern, a non-empty value must match it (empty means "not set" unless `required`). */
export function text(pattern?: RegExp, what?: string, required = false): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: `must be a string (got ${show(v)})` };
    if (pattern !== undefined && (v !== '' || required) && !pattern.test(v)) return { error: `must be ${what ?? pattern.source} (got ${show(v)})` };
    return v;
  };
}

export function boolean(): Check<boolean> {
  return (v) => (typeof v === 'boolean' ? v : { error: `must be true or false (got ${show(v)})` });
}

export function oneOf<T extends string>(...values: T[]): Check<T> {
  return (v) => (typeof v === 'string' && (values as string[]).includes(v) ? (v as T) : { error: `must be one of ${values.join(', ')} (got ${show(v)})` });
}

/** A list of CIDR blocks (a bare address is one host). */
export function cidrList(maxEntries: number): Check<string[]> {
  return (v) => {
    if (!Array.isArray(v)) return { error: `must be an array of CIDR blocks such as ["127.0.0.1/32"] (got ${show(v)})` };
    if (v.length > maxEntries) return { error: `at most ${maxEntries} entries (got ${v.length})` };
    for (const item of v) {
      if (typeof item !== 'string') return { error: `entries must be strings such as "10.0.0.0/8" (got ${show(item)})` };
      const c = parseCidr(item);
      if ('error' in c) return { error: c.error };
    }
    return [...(v as string[])];
  };
}

/** host:port, the host a name, an IPv4 address or a bracketed IPv6 address. */
const HOST_PORT = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$/;

function hostPortError(item: unknown): string | null {
  if (typeof item !== 'string') return `entries must be strings such as "10.0.0.1:9092" (got ${show(item)})`;
  const m = HOST_PORT.exec(item);
  if (m === null || Number(m[1]) < 1 || Number(m[1]) > 65535) return `"${item}" is not host:port (a port from 1 to 65535)`;
  return null;
}

/** One host:port, or empty for "not set". */
export function hostPort(): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: `must be a string such as "10.0.0.1:7070" (got ${show(v)})` };
    if (v === '') return v;
    const e = hostPortError(v);
    return e === null ? v : { error: `must be host:port: ${e}` };
  };
}

/** An array of host:port strings. */
export function hostPortList(maxEntries: number): Check<string[]> {
  return (v) => {
    if (!Array.isArray(v)) return { error: `must be an array of host:port strings such as ["10.0.0.2:7070"] (got ${show(v)})` };
    if (v.length > maxEntries) return { error: `at most ${maxEntries} entries (got ${v.length})` };
    for (const item of v) {
      const e = hostPortError(item);
      if (e !== null) return { error: e };
    }
    return [...(v as string[])];
  };
}

/** A comma-separated host:port list as librdkafka takes it ("a:9092,b:9092"), or empty. */
export function brokerList(maxEntries: number): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: `must be a string such as "10.0.0.1:9092,10.0.0.2:9092" (got ${show(v)})` };
    if (v === '') return v;
    const items = v.split(',').map((x) => x.trim());
    if (items.length > maxEntries) return { error: `at most ${maxEntries} brokers (got ${items.length})` };
    for (const item of items) {
      const e = hostPortError(item);
      if (e !== null) return { error: `must be "host:port,host:port": ${e}` };
    }
    return items.join(',');
  };
}

/** A table of librdkafka properties: dotted lower-case names, string/number/boolean values. */
export function propertyTable(maxEntries: number): Check<Record<string, string | number | boolean>> {
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: `must be a table of librdkafka properties such as { "socket.timeout.ms" = 30000 } (got ${show(v)})` };
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.length > maxEntries) return { error: `at most ${maxEntries} properties (got ${entries.length})` };
    // Null prototype, as smol-toml makes tables: no inherited keys, and equal to a parsed table.
    const out = Object.create(null) as Record<string, string | number | boolean>;
    for (const [k, val] of entries) {
      if (!/^[a-z][a-z0-9_.-]{0,199}$/.test(k)) return { error: `"${k}" is not a librdkafka property name (lower-case words joined by dots)` };
      if (typeof val !== 'string' && typeof val !== 'boolean' && !(typeof val === 'number' && Number.isFinite(val))) return { error: `${k}: must be a string, number or boolean (got ${show(val)})` };
      out[k] = val;
    }
    return out;
  };
}

const HOST = /^[A-Za-z0-9.:[\]-]+$/;
const URL_RE = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;

export const OPTIONS: readonly OptionSpec[] = [
  { path: 'node.id', default: 1, doc: "this node's integer id in the cluster; ingest partitions name nodes by it", check: integer(1, 65535) },
  { path: 'node.name', default: '', doc: 'display name in cluster listings; empty means "node-<id>"', check: text() },
  { path: 'node.host', default: '127.0.0.1', doc: 'address the HTTP front door binds to', check: text(HOST, 'a host name or IP address', true) },
  { path: 'node.port', default: 8080, doc: 'HTTP port; 0 picks a free port (the ready line says which)', check: integer(0, 65535) },
  { path: 'node.data_dir', default: './data', doc: 'directory for global state, the digest queue and segments', check: text(/^.+$/, 'a non-empty path', true) },
  { path: 'node.external_url', default: '', doc: 'URL other nodes and clients use for this node; empty means http://<host>:<port>', check: text(URL_RE, 'an http(s) URL') },
  { path: 'node.log_level', default: 'info', doc: 'least severe log level written to stderr', check: oneOf('debug', 'info', 'warn', 'error') },

  { path: 'http.max_body_bytes', default: 32 * 1024 * 1024, doc: 'largest request body accepted on ingest endpoints (413 above it)', check: integer(1024, 1024 * 1024 * 1024) },
  { path: 'http.max_inflight_body_bytes', default: 512 * 1024 * 1024, doc: 'bytes all request bodies being received or handled may hold together; a request past it is answered 503 with Retry-After before its body is read', check: integer(1024 * 1024, 64 * 1024 * 1024 * 1024) },
  { path: 'http.max_api_body_bytes', default: 1024 * 1024, doc: 'largest request body accepted on management endpoints (GraphQL, cluster config)', check: integer(1024, 64 * 1024 * 1024) },
  { path: 'http.max_decompressed_bytes', default: 128 * 1024 * 1024, doc: 'largest size a gzip/deflate request body may decompress to (413 above it)', check: integer(1024, 4 * 1024 * 1024 * 1024) },
  { path: 'http.max_header_bytes', default: 16 * 1024, doc: 'largest total size of request headers (431 above it)', check: integer(1024, 1024 * 1024) },
  { path: 'http.max_json_depth', default: 64, doc: 'deepest JSON nesting accepted in any request body', check: integer(2, 1000) },

  { path: 'ingest.max_events_per_request', default: 200_000, doc: 'most events one ingest request may carry (400 above it)', check: integer(1, 10_000_000) },
  { path: 'ingest.max_event_bytes', default: 1024 * 1024, doc: 'an event larger than this keeps only a truncated @rawstring (ending in "...") and no fields', check: integer(1024, 64 * 1024 * 1024) },
  { path: 'ingest.max_fields_per_event', default: 1000, doc: 'fields kept per event; further ones are dropped and the event is marked with @error', check: integer(1, 100_000) },
  { path: 'ingest.max_datasources_per_repository', default: 10_000, doc: 'distinct tag combinations a repository may have; ingest of a new one beyond it is refused (400)', check: integer(1, 10_000_000) },
  { path: 'ingest.offload_bytes', default: 16 * 1024, doc: 'request bodies at least this large are parsed on the worker pool instead of the HTTP thread', check: integer(0, 1024 * 1024 * 1024) },
  { path: 'ingest.max_undigested_bytes', default: 2 * 1024 * 1024 * 1024, doc: 'acknowledged bytes not yet in segments above which ingest answers 503 with Retry-After', check: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024) },
  { path: 'ingest.max_digest_backlog_bytes', default: 128 * 1024 * 1024, doc: 'events held in memory in sealed blocks waiting to be built and written (the digest is behind) above which ingest answers 503 with Retry-After: bounds memory at full load', check: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024) },

  { path: 'graphql.max_depth', default: 12, doc: 'deepest selection nesting a GraphQL operation may have', check: integer(2, 100) },
  { path: 'graphql.max_complexity', default: 2000, doc: 'largest number of fields a GraphQL operation may select, fragments expanded', check: integer(10, 1_000_000) },
  { path: 'graphql.explorer', default: true, doc: 'serve the interactive GraphQL explorer at /docs/api-explorer', check: boolean() },

  { path: 'health.grace_period_seconds', default: 30, doc: 'after start, overall health is at most WARN for this long', check: integer(0, 3600) },
  { path: 'health.check_interval_seconds', default: 5, doc: 'how often disk and data-dir checks are refreshed', check: integer(1, 300) },
  { path: 'health.disk_warn_percent', default: 90, doc: 'disk usage at which a disk check turns WARN', check: integer(1, 100) },
  { path: 'health.disk_down_percent', default: 97, doc: 'disk usage at which a disk check turns DOWN', check: integer(1, 100) },
  { path: 'health.secondary_data_dir', default: '', doc: 'secondary storage path checked by secondary-disk-usage; empty means not enabled', check: text() },
  { path: 'health.backup_dir', default: '', doc: 'backup path checked by backup-disk-usage; empty means not enabled', check: text() },
  { path: 'health.event_latency_warn_seconds', default: 30, doc: 'event-latency-p99 turns WARN above this many seconds', check: integer(1, 86400) },
  { path: 'health.event_latency_down_seconds', default: 600, doc: 'event-latency-p99 turns DOWN above this many seconds', check: integer(1, 86400) },

  { path: 'state.snapshot_every_events', default: 1000, doc: 'global-state events between snapshots of the whole state', check: integer(1, 10_000_000) },

  { path: 'digest.partitions', default: 24, doc: 'digest partitions of a new cluster (the count can be raised later, never lowered)', check: integer(1, 1024) },
  { path: 'digest.flush_block_seconds', default: 1800, doc: 'FLUSH_BLOCK_SECONDS: longest time events wait in an open block before it is written to a segment', check: integer(1, 7 * 86400) },
  { path: 'digest.blocks_per_segment', default: 2000, doc: 'BLOCKS_PER_SEGMENT: blocks after which a segment is closed', check: integer(1, 1_000_000) },
  { path: 'digest.max_hours_segment_open', default: 24, doc: 'MAX_HOURS_SEGMENT_OPEN: hours after which a segment is closed whatever its size', check: integer(1, 24 * 365) },
  { path: 'digest.block_target_bytes', default: 1024 * 1024, doc: 'size of the events as received (JSON, fields included) at which an open block is sealed and written; 1 MiB is ~0.4 MB of access-log raw text (larger blocks store smaller but hold the worker pool longer: 2 MiB doubled the acknowledgement p99)', check: integer(1024, 64 * 1024 * 1024) },
  { path: 'digest.open_block_budget_bytes', default: 256 * 1024 * 1024, doc: 'memory for open blocks of all partitions; above it the largest are written early', check: integer(1024 * 1024, 64 * 1024 * 1024 * 1024) },
  { path: 'digest.worker_threads', default: 0, doc: 'threads of each worker pool (foreground: ingest parsing, queries; background: block building); 0 means one per core', check: integer(0, 256) },
  { path: 'digest.block_build_nice', default: 10, doc: 'nice increment of the block-building threads, so that requests (acknowledgements, queries) get the cores first; 0 = same priority', check: integer(0, 19) },

  { path: 'query.max_concurrent', default: 16, doc: 'queries running at once on this node; further ones get 429 with Retry-After', check: integer(1, 10_000) },
  { path: 'query.max_concurrent_per_user', default: 8, doc: "queries of one user running at once; the user's further /query requests wait in line", check: integer(1, 10_000) },
  { path: 'query.queue_timeout_ms', default: 10_000, doc: 'how long a /query request may wait in line for a slot before it gets 429 with Retry-After', check: integer(0, 600_000) },
  { path: 'query.max_queued', default: 1000, doc: '/query requests that may wait in line at once; further ones get 429 at once', check: integer(0, 1_000_000) },
  { path: 'query.large_query_bytes', default: 256 * 1024 * 1024, doc: 'a query whose time range covers more stored bytes than this is large: large queries leave a quarter of the slots to small ones, which go first', check: integer(1024, 1024 * 1024 * 1024 * 1024) },
  { path: 'query.max_query_seconds', default: 300, doc: 'time one query (or one refresh of a live query) may run before it is stopped with an error', check: integer(1, 86400) },
  { path: 'query.max_groups', default: 1_000_000, doc: "most groups a groupBy/timechart may hold: groupBy's limit=max (its default limit is 20,000); further groups are left out with a warning", check: integer(1, 1_000_000) },
  { path: 'query.max_rows', default: 200_000, doc: 'most rows a head/tail/sort/table may keep (their limit=max, the product\'s StateRowLimit)', check: integer(1, 1_000_000) },
  { path: 'query.max_query_memory_bytes', default: 256 * 1024 * 1024, doc: 'memory one query may hold for the values, rows and groups it makes; past it the query ends with E_QUERY_MEMORY (docs/query-limits.md)', check: integer(1024 * 1024, 64 * 1024 * 1024 * 1024) },
  { path: 'query.max_total_query_memory_bytes', default: 1024 * 1024 * 1024, doc: 'memory all running queries of this node may hold together; a query that would pass it ends with E_QUERY_MEMORY_BUSY (429)', check: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024) },
  { path: 'query.job_idle_seconds', default: 30, doc: 'a query job not polled for this long is stopped and forgotten', check: integer(1, 86400) },
  { path: 'query.live_job_idle_seconds', default: 3600, doc: 'a live query job not polled for this long is stopped and forgotten', check: integer(1, 7 * 86400) },
  { path: 'query.max_jobs', default: 1000, doc: 'query jobs kept on this node at once (running or waiting to be polled)', check: integer(1, 1_000_000) },
  { path: 'query.task_bytes', default: 16 * 1024 * 1024, doc: 'uncompressed block bytes one worker task of a query scans', check: integer(64 * 1024, 1024 * 1024 * 1024) },
  { path: 'query.geoip_file', default: '', doc: 'CSV file (network,country,city,lat,lon) that ipLocation(), worldMap(ip=) and geohash read; empty: those functions fail naming this setting', check: text() },
  { path: 'query.asn_file', default: '', doc: 'CSV file (network,asn,org) that asn() reads; empty: asn() fails naming this setting', check: text() },
  { path: 'query.ioc_file', default: '', doc: 'CSV file (indicator,type,malicious_confidence,labels,published_date,last_updated) that ioc:lookup() reads; empty: ioc:lookup() fails naming this setting', check: text() },
  { path: 'query.rdns_enabled', default: true, doc: 'allow reverseDns()/rdns() (reverse DNS lookups from this node); false: those functions fail naming this setting', check: boolean() },
  { path: 'query.rdns_server', default: '', doc: 'name server reverseDns()/rdns() ask (ip or ip:port); empty: the system name servers', check: text(/^(?:[0-9.]+(?::[0-9]{1,5})?|[0-9A-Fa-f:]+|\[[0-9A-Fa-f:.]+\]:[0-9]{1,5})$/, 'an IP address, optionally with a port') },
  { path: 'query.rdns_timeout_ms', default: 5000, doc: 'time one reverseDns()/rdns() call waits for its lookups; rows not answered by then are not annotated', check: integer(100, 60_000) },
  { path: 'query.rdns_concurrency', default: 10, doc: 'reverse DNS requests this node has in flight at once (all queries)', check: integer(1, 1000) },
  { path: 'query.rdns_requests_per_second', default: 100, doc: 'reverse DNS requests this node sends per second (all queries)', check: integer(1, 100_000) },
  { path: 'query.rdns_max_limit', default: 20_000, doc: 'most distinct addresses one reverseDns()/rdns() call may look up (its limit parameter; default 5,000)', check: integer(1, 1_000_000) },

  // At most 512 MiB: a larger JSON file cannot be one JavaScript string, and table offsets are 32-bit.
  { path: 'files.max_file_bytes', default: 100 * 1024 * 1024, doc: 'largest lookup file (CSV or JSON) that may be uploaded (413 above it); at most 512 MiB', check: integer(1024, 512 * 1024 * 1024) },
  { path: 'files.max_rows', default: 1_000_000, doc: "most rows a lookup file may have (the product's exact-match limit)", check: integer(1, 100_000_000) },
  { path: 'files.max_files_per_repository', default: 1000, doc: 'lookup files one repository (or the shared scope) may hold', check: integer(1, 1_000_000) },
  { path: 'files.max_total_bytes', default: 10 * 1024 * 1024 * 1024, doc: 'bytes of distinct lookup-file contents all repositories and the shared scope may hold on disk together (409 above it)', check: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024 * 1024) },
  { path: 'files.cache_bytes', default: 1024 * 1024 * 1024, doc: 'memory for lookup tables loaded for queries (shared by the worker threads); least recently used ones are dropped', check: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024) },

  { path: 'parsers.max_event_ms', default: 50, doc: 'no longer used (a parser\'s completed output is never dropped for the time it took; one event\'s work is bounded by the query engine\'s limits, a request\'s by max_request_ms); accepted so that existing config files still load', check: integer(1, 60_000) },
  { path: 'parsers.max_request_ms', default: 10_000, doc: 'parser time one ingest request may use; later events of the request are stored unparsed and marked with @error', check: integer(1, 3_600_000) },
  { path: 'parsers.max_per_repository', default: 200, doc: 'custom parsers one repository may hold', check: integer(1, 100_000) },

  { path: 'listeners.max_listeners', default: 100, doc: 'ingest listeners (syslog over TCP/UDP) the cluster may define', check: integer(1, 10_000) },
  { path: 'listeners.max_connections', default: 1000, doc: 'TCP connections one listener accepts at once; further ones are closed at once', check: integer(1, 1_000_000) },
  { path: 'listeners.max_message_bytes', default: 64 * 1024, doc: 'longest message a listener takes: a longer newline-framed TCP message or UDP datagram is cut to it, a longer octet-counted TCP frame closes the connection', check: integer(480, 16 * 1024 * 1024) },
  { path: 'listeners.udp_max_pending_bytes', default: 8 * 1024 * 1024, doc: 'UDP messages a listener holds while the previous batch is being made durable; datagrams beyond it are dropped (and counted in the log)', check: integer(64 * 1024, 1024 * 1024 * 1024) },
  { path: 'listeners.batch_linger_ms', default: 20, doc: 'how long a listener gathers messages into one durable batch before committing it', check: integer(0, 10_000) },
  { path: 'alerts.enabled', default: true, doc: 'run alerts on this node (the product\'s ENABLE_ALERTS); false keeps the definitions but never evaluates them', check: boolean() },
  { path: 'alerts.evaluate_interval_ms', default: 5000, doc: 'how often every enabled alert\'s query is run over its window', check: integer(100, 3_600_000) },
  { path: 'alerts.max_concurrent_evaluations', default: 2, doc: 'alert queries run at once; they count toward query.max_concurrent', check: integer(1, 64) },
  { path: 'alerts.max_concurrent_deliveries', default: 8, doc: 'triggered alerts whose actions are delivered at once, apart from the evaluations (a hanging action holds one of these)', check: integer(1, 256) },
  { path: 'alerts.query_timeout_ms', default: 60_000, doc: 'longest an alert\'s query may run; it is then cancelled and the alert\'s lastError says so', check: integer(1000, 3_600_000) },
  { path: 'alerts.action_timeout_ms', default: 10_000, doc: 'time one attempt of an action (HTTP call, mail, re-ingest) may take', check: integer(100, 300_000) },
  { path: 'alerts.action_retries', default: 3, doc: 'attempts after the first for an action that failed in a way a retry may fix', check: integer(0, 10) },
  { path: 'alerts.retry_backoff_ms', default: 1000, doc: 'wait before the first retry of an action; doubled for each further one', check: integer(0, 600_000) },
  { path: 'alerts.max_response_bytes', default: 64 * 1024, doc: 'bytes of an action\'s HTTP response that are read; the rest is discarded', check: integer(0, 16 * 1024 * 1024) },
  { path: 'alerts.max_message_events', default: 200, doc: 'result rows put into one message ({events}, {events_str}, {events_html}, repository action)', check: integer(1, 20_000) },
  { path: 'alerts.max_message_bytes', default: 1024 * 1024, doc: 'largest rendered message (HTTP headers + body, Slack fields, mail subject + body); an action whose message is larger fails', check: integer(1024, 64 * 1024 * 1024) },
  { path: 'alerts.max_alerts_per_repository', default: 1000, doc: 'alerts one repository may have', check: integer(1, 1_000_000) },
  { path: 'alerts.max_actions_per_repository', default: 1000, doc: 'actions one repository may have', check: integer(1, 1_000_000) },
  { path: 'alerts.allow_targets', default: [], doc: 'CIDR blocks actions may call although they are loopback, private or link-local (e.g. ["127.0.0.1/32"])', check: cidrList(1000) },
  { path: 'alerts.pagerduty_url', default: 'https://events.pagerduty.com/v2/enqueue', doc: 'the PagerDuty Events API v2 endpoint PagerDuty actions post to', check: text(URL_RE, 'an http(s) URL', true) },
  { path: 'alerts.smtp_host', default: '', doc: 'SMTP server for email actions; empty means none (creating an email action then fails)', check: text(HOST, 'a host name or IP address') },
  { path: 'alerts.smtp_port', default: 25, doc: 'port of the SMTP server', check: integer(1, 65535) },
  { path: 'alerts.smtp_secure', default: false, doc: 'connect to the SMTP server with TLS from the start (port 465); false uses STARTTLS when the server offers it, and requires it when smtp_username is set', check: boolean() },
  { path: 'alerts.smtp_username', default: '', doc: 'SMTP user name; empty means no authentication', check: text() },
  { path: 'alerts.smtp_password', default: '', doc: 'SMTP password (used with smtp_username)', check: text() },
  { path: 'alerts.smtp_sender', default: 'logsvc@localhost', doc: 'the From address of alert mails', check: text(/^[^\s@<>]+@[^\s@<>]+$/, 'an email address', true) },

  { path: 'queue.kind', default: 'embedded', doc: 'where ingest is queued before digest: "embedded" (files in the data dir, one node) or "kafka" (the [kafka] cluster; needs a [cluster] section)', check: oneOf('embedded', 'kafka') },
  { path: 'queue.file_bytes', default: 8 * 1024 * 1024, doc: 'embedded queue: a partition starts a new file past this many bytes, and files wholly digested into segments are deleted (smaller files return disk sooner); 8 MiB', check: integer(1024 * 1024, 1024 * 1024 * 1024) },

  { path: 'kafka.brokers', default: '', doc: 'Kafka bootstrap brokers as librdkafka takes them, "host:port,host:port"; required with queue.kind = "kafka"', check: brokerList(100) },
  { path: 'kafka.topic_prefix', default: '', doc: 'prefix of every topic logsvc uses (e.g. "prod-" gives prod-service-ingest), so several clusters can share one Kafka', check: text(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, ".", "_" or "-", at most 100') },
  { path: 'kafka.topic_replication_factor', default: 0, doc: 'replication factor of the topics logsvc creates; 0 means the brokers\' default.replication.factor', check: integer(0, 32) },
  { path: 'kafka.min_insync_replicas', default: 0, doc: 'min.insync.replicas of the topics logsvc creates (an append needs this many replicas, acks=all); 0 means the brokers\' default', check: integer(0, 32) },
  { path: 'kafka.delivery_timeout_ms', default: 10_000, doc: 'longest an append waits for Kafka to take a record; then ingest answers 503 with Retry-After', check: integer(1000, 600_000) },
  { path: 'kafka.request_timeout_ms', default: 5000, doc: 'bound of one request to a broker (produce, metadata, topic creation)', check: integer(100, 300_000) },
  { path: 'kafka.properties', default: Object.create(null) as Record<string, never>, doc: 'extra librdkafka properties for every Kafka client, passed through as given (e.g. security.protocol, sasl.*)', check: propertyTable(200) },

  { path: 'cluster.listen', default: '', doc: 'host:port this node\'s cluster protocol listens on; empty means no cluster (a single node)', check: hostPort() },
  { path: 'cluster.advertise', default: '', doc: 'host:port other nodes should dial to reach this node (behind NAT or a proxy); empty means the listen address', check: hostPort() },
  { path: 'cluster.peers', default: [], doc: 'cluster protocol addresses (host:port) of other nodes to join through', check: hostPortList(1000) },
  { path: 'cluster.heartbeat_interval_ms', default: 1000, doc: 'how often a node sends heartbeats to the others', check: integer(50, 60_000) },
  { path: 'cluster.failure_timeout_ms', default: 5000, doc: 'a node not heard from for this long is taken as dead and its partitions are taken over', check: integer(200, 600_000) },
  { path: 'cluster.segment_replication_factor', default: 2, doc: 'nodes that hold a copy of each segment (at most the number of nodes in the cluster); a digest checkpoint passes a segment only once this many hold it, or every live node when fewer are up', check: integer(1, 16) },
  { path: 'cluster.replication_bytes_per_second', default: 100 * 1024 * 1024, doc: 'bytes per second all segment copies into this node may take together; 0 means unbounded', check: integer(0, 2 ** 40) },
  { path: 'cluster.replication_parallel_transfers', default: 2, doc: 'segment copies into this node at once', check: integer(1, 64) },
  { path: 'cluster.replication_outbound_bytes_per_second', default: 100 * 1024 * 1024, doc: 'bytes per second this node may send to peers copying its segments, all copies together; 0 means unbounded (else at least 65536)', check: zeroOrAtLeast(65536, 2 ** 40) },
  { path: 'cluster.replication_outbound_parallel_transfers', default: 4, doc: 'segment copies this node sends at once; a peer asking for more is told to try again shortly', check: integer(1, 64) },
  { path: 'cluster.rereplicate_after_seconds', default: 300, doc: 'a node dead this long no longer counts as a holder: its segments are copied to other nodes to keep the replication factor', check: integer(0, 30 * 86400) },
  { path: 'cluster.scrub_bytes_per_second', default: 8 * 1024 * 1024, doc: 'rate at which held segments are re-read to check their checksums (a damaged copy is replaced from a healthy holder); 0 turns scrubbing off', check: integer(0, 2 ** 40) },
  { path: 'cluster.scrub_interval_seconds', default: 86400, doc: 'pause between two full scrub passes (the first starts when the node starts)', check: integer(1, 365 * 86400) },
  { path: 'cluster.secret', default: '', doc: 'shared secret of the cluster (the same on every node, at least 16 characters): nodes prove they hold it (HMAC challenge-response) before anything else on the cluster port; required in a cluster unless secret_file is set', check: secretText() },
  { path: 'cluster.secret_file', default: '', doc: 'file holding the cluster secret instead of secret (its content, trimmed, at least 16 characters); keeps the secret out of this file', check: text() },
  { path: 'cluster.insecure_loopback', default: false, doc: 'development only: allow a cluster without a secret when listen, advertise and every peer are loopback addresses', check: boolean() },

  { path: 'metrics.enabled', default: true, doc: 'serve Prometheus metrics (text exposition format) at GET /metrics', check: boolean() },
  { path: 'metrics.open_on_loopback', default: true, doc: 'a scrape from a loopback address needs no token; from elsewhere it needs metrics.token or a root API token', check: boolean() },
  { path: 'metrics.token', default: '', doc: 'bearer token a scraper may send for /metrics (at least 16 characters); empty means only root API tokens (and loopback, if open)', check: text(/^\S{16,512}$/, '16 to 512 characters without spaces') },
  { path: 'ui.enabled', default: true, doc: 'serve the web UI at / (assets built into dist/ui by npm run build)', check: boolean() },
  { path: 'self_logs.enabled', default: true, doc: "ingest this node's own log lines into the system repository humio (created on first start)", check: boolean() },
  { path: 'self_logs.level', default: 'info', doc: 'lowest level of the lines ingested into humio (the stderr log keeps node.log_level)', check: oneOf('debug', 'info', 'warn', 'error') },
  { path: 'self_logs.retention_days', default: 30, doc: 'time retention of the humio repository in days, set when it is created (the retention sweep applies it)', check: integer(1, 3650) },
  { path: 'self_logs.buffer_lines', default: 10_000, doc: 'log lines waiting to be ingested into humio at most; further lines are dropped and counted (logsvc_self_log_dropped_total)', check: integer(100, 1_000_000) },
  { path: 'retention.interval_seconds', default: 60, doc: 'how often the retention sweep runs (it also runs at start): data past a repository\'s retention is deleted within this time', check: integer(1, 86_400) },
  { path: 'retention.default_time_days', default: 0, doc: 'time retention in days for repositories that set none; 0: none', check: integer(0, 1_000_000) },
  { path: 'retention.default_ingest_gb', default: 0, doc: 'ingest-size retention in GB for repositories that set none; 0: none', check: integer(0, 1_000_000_000) },
  { path: 'retention.default_storage_gb', default: 0, doc: 'storage-size retention in GB for repositories that set none; 0: none', check: integer(0, 1_000_000_000) },
  { path: 'retention.disk_watermark_percent', default: 0, doc: 'when the data dir\'s disk is fuller than this, the oldest segments of any repository are deleted until it is not; 0: off', check: integer(0, 99) },
];

/**
 * Rules that span options; each returns problems as `path: message`. A rule is skipped when one of
 * its options already failed validation (`failed`), since its value would then be the default.
 */
export function crossChecks(c: NodeConfig, failed: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  const usable = (...paths: string[]): boolean => paths.every((p) => !failed.has(p));
  if (usable('health.disk_down_percent', 'health.disk_warn_percent') && c.health.disk_down_percent < c.health.disk_warn_percent) {
    out.push(`health.disk_down_percent: must not be below health.disk_warn_percent (${c.health.disk_warn_percent})`);
  }
  if (
    usable('health.event_latency_down_seconds', 'health.event_latency_warn_seconds') &&
    c.health.event_latency_down_seconds < c.health.event_latency_warn_seconds
  ) {
    out.push(`health.event_latency_down_seconds: must not be below health.event_latency_warn_seconds (${c.health.event_latency_warn_seconds})`);
  }
  out.push(...clusterChecks(c, failed));
  return out;
}

/**
 * A cluster shares one Kafka (queue and global state), and Kafka is only for a cluster: either both
 * a [cluster] section (listen) and a Kafka queue ([kafka] brokers, queue.kind = "kafka"), or neither.
 */
function clusterChecks(c: NodeConfig, failed: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (!failed.has('cluster.heartbeat_interval_ms') && !failed.has('cluster.failure_timeout_ms') && c.cluster.failure_timeout_ms < 2 * c.cluster.heartbeat_interval_ms) {
    out.push(`cluster.failure_timeout_ms: must be at least twice cluster.heartbeat_interval_ms (${c.cluster.heartbeat_interval_ms})`);
  }
  if (!failed.has('kafka.min_insync_replicas') && !failed.has('kafka.topic_replication_factor') && c.kafka.topic_replication_factor > 0 && c.kafka.min_insync_replicas > c.kafka.topic_replication_factor) {
    out.push(`kafka.min_insync_replicas: must not exceed kafka.topic_replication_factor (${c.kafka.topic_replication_factor}), or no append could succeed`);
  }
  if (['queue.kind', 'kafka.brokers', 'cluster.listen', 'cluster.peers'].some((p) => failed.has(p))) return out;
  const kafka = c.queue.kind === 'kafka' || c.kafka.brokers !== '';
  const cluster = c.cluster.listen !== '' || c.cluster.peers.length > 0;
  if (cluster && !kafka) out.push('cluster: a cluster needs Kafka, and it is missing: set [queue] kind = "kafka" and [kafka] brokers');
  if (kafka && !cluster) out.push('kafka: Kafka is only used by a cluster, and the [cluster] section is missing: set [cluster] listen (and peers)');
  if (cluster && c.cluster.listen === '') out.push('cluster.listen: required in a cluster (host:port of this node\'s cluster protocol)');
  if (kafka && c.kafka.brokers === '') out.push('kafka.brokers: required with queue.kind = "kafka" (e.g. "10.0.0.1:9092,10.0.0.2:9092")');
  if (cluster && kafka && c.queue.kind !== 'kafka') out.push('queue.kind: must be "kafka" in a cluster (every node digests from the same Kafka topic)');
  if (cluster && !['cluster.secret', 'cluster.secret_file', 'cluster.advertise'].some((p) => failed.has(p))) out.push(...secretChecks(c));
  return out;
}

/**
 * The cluster port is authenticated by a shared secret: a cluster needs one (inline or in a file,
 * not both), unless it is a development cluster on loopback addresses that says so.
 */
function secretChecks(c: NodeConfig): string[] {
  const { secret, secret_file: file, insecure_loopback: insecure } = c.cluster;
  if (secret !== '' && file !== '') return ['cluster.secret: give the cluster secret once, either secret or secret_file, not both'];
  if (secret !== '' || file !== '') return [];
  const addrs = [c.cluster.listen, c.cluster.advertise, ...c.cluster.peers].filter((a) => a !== '');
  const remote = addrs.filter((a) => !isLoopbackAddr(a));
  if (!insecure) {
    return ['cluster.secret: a cluster needs a shared secret, the same on every node (secret or secret_file, at least 16 characters), so only its own nodes can join and read segments; a development cluster on loopback addresses only may set insecure_loopback = true instead'];
  }
  return remote.length === 0 ? [] : [`cluster.insecure_loopback: allowed only when every cluster address is a loopback address, and ${remote.join(', ')} is not; set cluster.secret`];
}

/** Whether host:port names this machine's loopback interface (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddr(addr: string): boolean {
  const host = addr.startsWith('[') ? addr.slice(1, addr.indexOf(']')) : addr.slice(0, addr.lastIndexOf(':'));
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
