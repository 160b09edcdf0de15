/**
 * The Splunk HTTP Event Collector door (docs/ingest-doors.md): the product's `/api/v1/ingest/hec`
 * paths and Splunk's `/services/collector` ones. The ingest token comes as `Splunk <t>`, Bearer or
 * Basic (the token as password); answers are HEC's JSON (`{"text":"Success","code":0}`, HEC's
 * codes and texts for failures), sent only once the events are durable. Indexer acknowledgement:
 * a request with a channel (`X-Splunk-Request-Channel` or `?channel=`) gets an `ackId`; since the
 * answer already waits for durability, every id handed out is acknowledged when asked about, on any
 * node of the cluster (the id carries its own check: src/ingest/doors/hec-ack.ts).
 */
import { LogsvcError, isLogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import { HEC, type HecParams } from '../../ingest/doors/hec.js';
import { HecAckIds, isIssuedAckId } from '../../ingest/doors/hec-ack.js';
import type { HttpServices } from '../context.js';
import { json, type Reply, type RequestInfo, type Route } from '../types.js';
import { ingestBody } from '../../ingest/ingest-request.js';
import { ingestTarget } from './ingest.js';

/** Ids asked about per ack request. */
const MAX_ACKS_PER_REQUEST = 10_000;
const CHANNEL = /^[A-Za-z0-9_.:\-{}]{1,128}$/;

/** A HEC answer: `{text, code}` plus what else the case needs; `message` says what was wrong. */
function hec(status: number, kind: { code: number; text: string }, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Reply {
  return json(status, { text: kind.text, code: kind.code, ...extra }, headers);
}

/** Any failure of a HEC request in HEC's shape. */
export function hecErrorReply(err: unknown): Reply {
  if (!isLogsvcError(err)) throw err;
  const detail = (err as { detail?: { code?: unknown } }).detail;
  if (detail !== undefined && typeof detail.code === 'number') return json(400, { ...detail, message: err.message });
  const message = err.message;
  switch (err.code) {
    case 'E_AUTH_MISSING':
      return hec(401, { code: 2, text: 'Token is required' }, { message }, { 'www-authenticate': 'Splunk' });
    case 'E_AUTH_INVALID':
      return hec(401, /malformed|scheme|Basic/.test(message) ? { code: 3, text: 'Invalid authorization' } : { code: 4, text: 'Invalid token' }, { message }, { 'www-authenticate': 'Splunk' });
    case 'E_FORBIDDEN':
      return hec(403, { code: 4, text: 'Invalid token' }, { message });
    case 'E_UNAVAILABLE':
    case 'E_STATE_WRITE_FAILED':
    case 'E_TOO_MANY_REQUESTS':
      return hec(503, { code: 9, text: 'Server is busy' }, { message }, { 'retry-after': '5' });
    case 'E_NOT_FOUND':
      return hec(400, HEC.incorrectIndex, { message });
    default:
      return err.httpStatus >= 500 ? hec(500, { code: 8, text: 'Internal server error' }, { message }) : hec(err.httpStatus, HEC.invalidData, { message });
  }
}

function channelOf(req: RequestInfo): string | undefined {
  const c = req.headers.get('x-splunk-request-channel') ?? req.query.get('channel') ?? undefined;
  if (c === undefined || c === '') return undefined;
  if (!CHANNEL.test(c)) throw Object.assign(new LogsvcError('E_VALIDATION', 'the data channel must be 1-128 letters, digits and "-" (a GUID)'), { detail: { text: 'Invalid data channel', code: 11 } });
  return c;
}

export function hecRoutes(s: HttpServices): Route[] {
  const acks = new HecAckIds();
  const guard =
    (fn: (req: RequestInfo, body: Buffer) => Promise<Reply> | Reply) =>
    async (req: RequestInfo, body: Buffer): Promise<Reply> => {
      try {
        return await fn(req, body);
      } catch (err) {
        return hecErrorReply(err);
      }
    };

  const events = (raw: boolean) =>
    guard(async (req, body) => {
      const target = ingestTarget(s, req);
      const channel = channelOf(req);
      const q = req.query;
      const params: HecParams = { door: 'hec', raw, repositoryName: target.repo.name };
      if (raw) {
        params.query = {};
        for (const k of ['sourcetype', 'host', 'source', 'index', 'time'] as const) {
          const v = q.get(k);
          if (v !== null) params.query[k] = v.slice(0, 1024);
        }
        if (channel !== undefined) params.query.channel = channel;
      }
      await ingestBody(s, target, 'door', body, req.headers.get('content-encoding'), { params, anyParser: true });
      return json(200, channel === undefined ? { text: 'Success', code: 0 } : { text: 'Success', code: 0, ackId: acks.issue(target.repo.id, channel) });
    });

  const ack = guard((req, body) => {
    const target = ingestTarget(s, req);
    const channel = channelOf(req);
    if (channel === undefined) return hec(400, { code: 10, text: 'Data channel is missing' });
    let parsed: unknown;
    try {
      parsed = parseJsonBounded(body.toString('utf8'), 4, 'ack request');
    } catch {
      return hec(400, HEC.invalidData, { message: 'the body must be {"acks": [<ack id>, ...]}' });
    }
    const ids = (parsed as { acks?: unknown } | null)?.acks;
    if (!Array.isArray(ids) || ids.length > MAX_ACKS_PER_REQUEST || !ids.every((i) => Number.isSafeInteger(i) && (i as number) >= 0)) {
      return hec(400, HEC.invalidData, { message: `the body must be {"acks": [...]} with at most ${MAX_ACKS_PER_REQUEST} non-negative integer ids` });
    }
    // Success answers wait for durability, so every id handed out (by any node) is acknowledged.
    const out: Record<string, boolean> = {};
    for (const i of ids as number[]) out[String(i)] = isIssuedAckId(target.repo.id, channel, i);
    return json(200, { acks: out });
  });

  const health = guard((req) => {
    if (req.headers.get('authorization') !== undefined) {
      try {
        ingestTarget(s, req);
      } catch (err) {
        if (isLogsvcError(err) && err.httpStatus === 401) return hec(400, { code: 4, text: 'Invalid token' });
        throw err;
      }
    }
    try {
      s.ingest.admit();
    } catch (err) {
      if (isLogsvcError(err) && err.code === 'E_UNAVAILABLE') return hec(503, { code: 18, text: 'HEC is unhealthy, queues are full' }, { message: err.message }, { 'retry-after': '5' });
      throw err;
    }
    return hec(200, { code: 17, text: 'HEC is healthy' });
  });

  const routes: Route[] = [];
  const post = (pattern: string, handle: Route['handle']): void => void routes.push({ method: 'POST', pattern, body: 'ingest', handle });
  for (const p of ['/api/v1/ingest/hec', '/services/collector', '/services/collector/event', '/services/collector/event/1.0']) post(p, events(false));
  for (const p of ['/api/v1/ingest/hec/raw', '/services/collector/raw', '/services/collector/raw/1.0']) post(p, events(true));
  for (const p of ['/services/collector/ack', '/services/collector/ack/1.0']) routes.push({ method: 'POST', pattern: p, body: 'api', handle: ack });
  for (const p of ['/services/collector/health', '/services/collector/health/1.0', '/api/v1/ingest/hec/health']) routes.push({ method: 'GET', pattern: p, body: 'none', handle: health });
  return routes;
}
