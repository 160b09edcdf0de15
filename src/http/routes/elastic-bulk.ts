/**
 * The Elasticsearch bulk door (docs/ingest-doors.md) under `/api/v1/ingest/elastic-bulk` (and the
 * product's root `/_bulk`): `_bulk` (POST and PUT, with or without an index in the path) and the
 * probes shippers make first (`GET /`, license, xpack, cluster health, template, ILM and pipeline
 * calls), answered as an Elasticsearch of the version the client asks compatibility with (8 by
 * default). Every answer carries `X-Elastic-Product: Elasticsearch`. The ingest token comes as the
 * Basic password (or user name), or Bearer. `_bulk` answers only once its events are durable.
 */
import { isLogsvcError } from '../../lib/errors.js';
import type { HttpServices } from '../context.js';
import { type Reply, type RequestInfo, type Route } from '../types.js';
import { ingestBody } from '../../ingest/ingest-request.js';
import { ingestTarget } from './ingest.js';

const BASE = '/api/v1/ingest/elastic-bulk';

/** The major version the client asks compatibility with (`compatible-with=N`), if any. */
function compatibleWith(req: RequestInfo): number | null {
  const m = /compatible-with=(\d+)/.exec(`${req.headers.get('accept') ?? ''} ${req.headers.get('content-type') ?? ''}`);
  return m === null ? null : Number(m[1]);
}

function esReply(req: RequestInfo, status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  const compat = compatibleWith(req);
  return {
    status,
    headers: {
      'content-type': compat === null ? 'application/json; charset=UTF-8' : `application/vnd.elasticsearch+json;compatible-with=${compat}`,
      'x-elastic-product': 'Elasticsearch',
      ...headers,
    },
    body: JSON.stringify(value),
  };
}

function esError(req: RequestInfo, status: number, type: string, reason: string, headers: Record<string, string> = {}): Reply {
  return esReply(req, status, { error: { root_cause: [{ type, reason }], type, reason }, status }, headers);
}

/** Any failure in Elasticsearch's error shape. */
function esErrorReply(req: RequestInfo, err: unknown): Reply {
  if (!isLogsvcError(err)) throw err;
  const detail = (err as { detail?: { type?: unknown } }).detail;
  if (detail !== undefined && typeof detail.type === 'string') return esError(req, 400, detail.type, err.message);
  if (err.httpStatus === 401) return esError(req, 401, 'security_exception', err.message, { 'www-authenticate': 'Basic realm="logsvc", charset="UTF-8"' });
  if (err.httpStatus === 403) return esError(req, 403, 'security_exception', err.message);
  if (err.httpStatus === 503 || err.httpStatus === 429) return esError(req, err.httpStatus, 'es_rejected_execution_exception', err.message, { 'retry-after': '5' });
  if (err.httpStatus === 413) return esError(req, 413, 'content_too_long_exception', err.message);
  if (err.httpStatus >= 500) return esError(req, err.httpStatus, 'exception', err.message);
  return esError(req, err.httpStatus, 'illegal_argument_exception', err.message);
}

function versionFor(major: number | null): string {
  if (major === 7) return '7.17.0';
  if (major !== null && major >= 9) return `${major}.0.0`;
  return '8.11.0';
}

export function elasticBulkRoutes(s: HttpServices): Route[] {
  const guard =
    (fn: (req: RequestInfo, body: Buffer) => Promise<Reply> | Reply) =>
    async (req: RequestInfo, body: Buffer): Promise<Reply> => {
      try {
        return await fn(req, body);
      } catch (err) {
        return esErrorReply(req, err);
      }
    };

  const bulk = guard(async (req, body) => {
    const started = Date.now();
    const target = ingestTarget(s, req);
    const index = req.params.index;
    const out = await ingestBody(s, target, 'door', body, req.headers.get('content-encoding'), { params: index === undefined ? { door: 'elastic-bulk' } : { door: 'elastic-bulk', index }, anyParser: true });
    // The items come as JSON from the parsing thread (elastic-bulk.ts bulkReply): this thread only wraps them.
    const r = out.reply !== undefined && 'itemsJson' in out.reply ? out.reply : { itemsJson: '[]', errors: false };
    return { ...esReply(req, 200, null), body: `{"took":${Date.now() - started},"errors":${r.errors},"items":${r.itemsJson}}` };
  });

  const info = guard((req) => {
    ingestTarget(s, req);
    const version = versionFor(compatibleWith(req));
    return esReply(req, 200, {
      name: 'logsvc',
      cluster_name: 'logsvc',
      cluster_uuid: 'logsvc',
      version: {
        number: version,
        build_flavor: 'default',
        build_type: 'logsvc',
        build_hash: 'logsvc',
        build_date: '2023-11-04T10:04:57.184859352Z',
        build_snapshot: false,
        lucene_version: '9.8.0',
        minimum_wire_compatibility_version: '7.17.0',
        minimum_index_compatibility_version: '7.0.0',
      },
      tagline: 'You Know, for Search',
    });
  });

  const license = { status: 'active', uid: '00000000-0000-0000-0000-000000000000', type: 'basic', mode: 'basic', issue_date: '2024-01-01T00:00:00.000Z', issue_date_in_millis: 1704067200000, max_nodes: 1000, issued_to: 'logsvc', issuer: 'logsvc', start_date_in_millis: -1 };
  const fixed = (value: unknown) =>
    guard((req) => {
      ingestTarget(s, req);
      return esReply(req, 200, value);
    });
  const catHealth = guard((req) => {
    ingestTarget(s, req);
    const now = Math.floor(Date.now() / 1000);
    return { status: 200, headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-elastic-product': 'Elasticsearch' }, body: `${now} ${new Date(now * 1000).toISOString().slice(11, 19)} logsvc green 1 1 0 0 0 0 0 0 - 100.0%\n` };
  });

  const routes: Route[] = [];
  const add = (method: string, pattern: string, handle: Route['handle'], body: Route['body'] = 'none'): void => void routes.push({ method, pattern, body, handle });
  for (const base of [BASE]) {
    add('GET', base, info);
    add('GET', `${base}/_license`, fixed({ license }));
    add('GET', `${base}/_xpack`, fixed({ build: { hash: 'logsvc', date: '2023-11-04T10:04:57.184859352Z' }, license, features: {} }));
    add('GET', `${base}/_cluster/health`, fixed({ cluster_name: 'logsvc', status: 'green', timed_out: false, number_of_nodes: 1, number_of_data_nodes: 1 }));
    add('GET', `${base}/_cat/health`, catHealth);
    add('GET', `${base}/_nodes`, fixed({ _nodes: { total: 1, successful: 1, failed: 0 }, cluster_name: 'logsvc', nodes: {} }));
    // Templates, ILM policies, ingest pipelines and data streams a shipper may check for or install:
    // reported present and accepted; logsvc keeps no mappings (fields are found per event).
    for (const kind of ['_template', '_index_template', '_component_template', '_ilm/policy', '_ingest/pipeline', '_data_stream']) {
      add('GET', `${base}/${kind}/:name`, fixed({}));
      for (const m of ['PUT', 'POST']) add(m, `${base}/${kind}/:name`, fixed({ acknowledged: true }), 'api');
    }
    // Logstash asks whether ILM is there (GET _ilm/policy), then whether its rollover alias exists
    // (HEAD /<alias>) and creates the first index behind it when not (PUT /<alias-{now/d}-000001>):
    // every index "exists", and creating one is acknowledged (events land in the token's repository).
    add('GET', `${base}/_ilm/policy`, fixed({}));
    add(
      'GET',
      `${base}/:index`,
      guard((req) => {
        ingestTarget(s, req);
        return esReply(req, 200, { [req.params.index!]: { aliases: {}, mappings: {}, settings: {} } });
      }),
    );
    add(
      'PUT',
      `${base}/:index`,
      guard((req) => {
        ingestTarget(s, req);
        return esReply(req, 200, { acknowledged: true, shards_acknowledged: true, index: req.params.index! });
      }),
      'api',
    );
    for (const m of ['POST', 'PUT']) {
      add(m, `${base}/_bulk`, bulk, 'ingest');
      add(m, `${base}/:index/_bulk`, bulk, 'ingest');
    }
  }
  for (const m of ['POST', 'PUT']) add(m, '/_bulk', bulk, 'ingest');
  return routes;
}
