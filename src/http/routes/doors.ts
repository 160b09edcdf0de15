/** The shippers' doors: Splunk HEC, Elasticsearch bulk and OTLP/HTTP logs (docs/ingest-doors.md). */
import type { HttpServices } from '../context.js';
import type { Route } from '../types.js';
import { hecRoutes } from './hec.js';
import { elasticBulkRoutes } from './elastic-bulk.js';
import { otlpRoutes } from './otlp.js';

/**
 * The doors read their protocols' own credentials (Splunk, Basic with the token as password) and
 * answer refusals in their protocols' shapes, so the server's generic check before the body is
 * left to them: their bodies are still bounded by the in-flight body budget and the size limits.
 */
export function doorRoutes(s: HttpServices): Route[] {
  return [...hecRoutes(s), ...elasticBulkRoutes(s), ...otlpRoutes(s)].map((r) => (r.preAuth === undefined ? { ...r, preAuth: 'public' as const } : r));
}
