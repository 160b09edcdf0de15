/**
 * Every configuration option: its key path, default, one-line doc and validator. This table is the
 * single source of truth: the loader validates against it, `cluster.example.toml` documents every
 * entry (a unit test keeps the two in step), and nothing else reads raw TOML.
 */

export interface NodeConfig {
  node: { id: number; name: string; host: string; port: number; data_dir: string; external_url: string; log_level: 'debug' | 'info' | 'warn' | 'error' };
  http: { max_body_bytes: number; max_api_body_bytes: number; max_header_bytes: number; max_json_depth: number };
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
  digest: { partitions: number };
}

/** A validator returns the accepted value, or a string describing what is wrong. */
type Check<T> = (value: unknown) => T | { error: string };

export interface OptionSpec {
  path: string;
  default: unknown;
  doc: string;
  check: Check<unknown>;
}

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

export function integer(min: number, max: number): Check<number> {
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? v
      : { error: `must be an integer from ${min} to ${max} (got ${show(v)})` };
}

export function text(pattern?: RegExp, what?: string): Check<string> {
  return (v) => {
    if (typeof v !== 'string') return { error: `must be a string (got ${show(v)})` };
    if (pattern !== undefined && v !== '' && !pattern.test(v)) return { error: `must be ${what ?? pattern.source} (got ${show(v)})` };
    return v;
  };
}

export function boolean(): Check<boolean> {
  return (v) => (typeof v === 'boolean' ? v : { error: `must be true or false (got ${show(v)})` });
}

export function oneOf<T extends string>(...values: T[]): Check<T> {
  return (v) => (typeof v === 'string' && (values as string[]).includes(v) ? (v as T) : { error: `must be one of ${values.join(', ')} (got ${show(v)})` });
}

const HOST = /^[A-Za-z0-9.:[\]-]+$/;
const URL_RE = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;

export const OPTIONS: readonly OptionSpec[] = [
  { path: 'node.id', default: 1, doc: "this node's integer id in the cluster; ingest partitions name nodes by it", check: integer(1, 65535) },
  { path: 'node.name', default: '', doc: 'display name in cluster listings; empty means "node-<id>"', check: text() },
  { path: 'node.host', default: '127.0.0.1', doc: 'address the HTTP front door binds to', check: text(HOST, 'a host name or IP address') },
  { path: 'node.port', default: 8080, doc: 'HTTP port; 0 picks a free port (the ready line says which)', check: integer(0, 65535) },
  { path: 'node.data_dir', default: './data', doc: 'directory for global state, the digest queue and segments', check: text(/^.+$/, 'a non-empty path') },
  { path: 'node.external_url', default: '', doc: 'URL other nodes and clients use for this node; empty means http://<host>:<port>', check: text(URL_RE, 'an http(s) URL') },
  { path: 'node.log_level', default: 'info', doc: 'least severe log level written to stderr', check: oneOf('debug', 'info', 'warn', 'error') },

  { path: 'http.max_body_bytes', default: 32 * 1024 * 1024, doc: 'largest request body accepted on ingest endpoints (413 above it)', check: integer(1024, 1024 * 1024 * 1024) },
  { path: 'http.max_api_body_bytes', default: 1024 * 1024, doc: 'largest request body accepted on management endpoints (GraphQL, cluster config)', check: integer(1024, 64 * 1024 * 1024) },
  { path: 'http.max_header_bytes', default: 16 * 1024, doc: 'largest total size of request headers (431 above it)', check: integer(1024, 1024 * 1024) },
  { path: 'http.max_json_depth', default: 64, doc: 'deepest JSON nesting accepted in any request body', check: integer(2, 1000) },

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
];

/** Rules that span options; each returns problems as `path: message`. */
export function crossChecks(c: NodeConfig): string[] {
  const out: string[] = [];
  if (c.health.disk_down_percent < c.health.disk_warn_percent) {
    out.push(`health.disk_down_percent: must not be below health.disk_warn_percent (${c.health.disk_warn_percent})`);
  }
  if (c.health.event_latency_down_seconds < c.health.event_latency_warn_seconds) {
    out.push(`health.event_latency_down_seconds: must not be below health.event_latency_warn_seconds (${c.health.event_latency_warn_seconds})`);
  }
  return out;
}
