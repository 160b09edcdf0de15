/** Cluster configuration: the digest-partition layout (root only). */
import { requireRoot } from '../../auth/index.js';
import { toWire } from '../../cluster/index.js';
import { parseJsonBounded } from '../../lib/json.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Route } from '../types.js';

export function clusterRoutes(s: HttpServices): Route[] {
  const path = '/api/v1/clusterconfig/ingestpartitions';
  return [
    {
      method: 'GET',
      pattern: path,
      body: 'none',
      handle: (req) => {
        requireRoot(apiPrincipal(s, req), 'reading the ingest partition layout');
        return json(200, toWire(s.cluster.layout()));
      },
    },
    {
      method: 'POST',
      pattern: path,
      body: 'api',
      handle: async (req, body) => {
        const p = apiPrincipal(s, req);
        requireRoot(p, 'changing the ingest partition layout');
        const proposed = parseJsonBounded(body.toString('utf8'), s.maxJsonDepth, 'ingest partition layout');
        return json(200, toWire(await s.cluster.setLayout(p, proposed)));
      },
    },
  ];
}
