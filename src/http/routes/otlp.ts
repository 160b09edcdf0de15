/**
 * The OpenTelemetry OTLP/HTTP logs door (docs/ingest-doors.md): `POST /api/v1/ingest/otlp/v1/logs`
 * with a binary protobuf (`application/x-protobuf`) or JSON (`application/json`)
 * ExportLogsServiceRequest, gzip or not. The answer is an ExportLogsServiceResponse in the
 * request's encoding (with partial success when records were rejected), sent once the events are
 * durable; failures are a google.rpc.Status in that encoding, with the HTTP status OTLP clients
 * act on (400 and 401/403 are final, 429/503 with Retry-After are retried).
 */
import { isLogsvcError, LogsvcError } from '../../lib/errors.js';
import { encodeLogsResponse, encodeRpcStatus } from '../../ingest/doors/otlp-proto.js';
import type { HttpServices } from '../context.js';
import { json, type Reply, type RequestInfo, type Route } from '../types.js';
import { ingestBody } from '../../ingest/ingest-request.js';
import { ingestTarget } from './ingest.js';

type Encoding = 'protobuf' | 'json';

function encodingOf(req: RequestInfo): Encoding | null {
  const ct = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct === 'application/x-protobuf' || ct === 'application/protobuf') return 'protobuf';
  if (ct === 'application/json') return 'json';
  return null;
}

/** gRPC status codes by HTTP status, as OTLP/HTTP pairs them. */
function rpcCode(status: number): number {
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 5;
  if (status === 413) return 8;
  if (status === 429 || status === 503) return 14;
  if (status >= 500) return 13;
  return 3;
}

function statusReply(enc: Encoding, status: number, message: string): Reply {
  const headers: Record<string, string> = status === 429 || status === 503 ? { 'retry-after': '5' } : {};
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  if (enc === 'json') return json(status, { code: rpcCode(status), message }, headers);
  return { status, headers: { 'content-type': 'application/x-protobuf', ...headers }, body: encodeRpcStatus(rpcCode(status), message) };
}

export function otlpRoutes(s: HttpServices): Route[] {
  const logs = async (req: RequestInfo, body: Buffer): Promise<Reply> => {
    const enc = encodingOf(req);
    try {
      if (enc === null) throw new LogsvcError('E_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/x-protobuf or application/json');
      const target = ingestTarget(s, req);
      const out = await ingestBody(s, target, 'door', body, req.headers.get('content-encoding'), { params: { door: 'otlp', encoding: enc }, anyParser: false });
      const r = out.reply !== undefined && 'rejected' in out.reply ? out.reply : { rejected: 0, errorMessage: '' };
      if (enc === 'json') {
        return json(200, r.rejected === 0 && r.errorMessage === '' ? {} : { partialSuccess: { rejectedLogRecords: String(r.rejected), errorMessage: r.errorMessage } });
      }
      return { status: 200, headers: { 'content-type': 'application/x-protobuf' }, body: encodeLogsResponse(r.rejected, r.errorMessage) };
    } catch (err) {
      if (!isLogsvcError(err)) throw err;
      return statusReply(enc ?? 'json', err.httpStatus, err.message);
    }
  };
  return ['/api/v1/ingest/otlp/v1/logs'].map((pattern) => ({ method: 'POST', pattern, body: 'ingest' as const, handle: logs }));
}
