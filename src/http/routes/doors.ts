/** The shippers' doors: Splunk HEC, Elasticsearch bulk and OTLP/HTTP logs (docs/ingest-doors.md). */
import type { HttpServices } from '../context.js';
import type { Route } from '../types.js';
import { hecRoutes } from './hec.js';
import { elasticBulkRoutes } from './elastic-bulk.js';
import { otlpRoutes } from './otlp.js';

export function doorRoutes(s: HttpServices): Route[] {
  return [...hecRoutes(s), ...elasticBulkRoutes(s), ...otlpRoutes(s)];
}
