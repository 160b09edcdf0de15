/** Cluster configuration: the digest-partition layout (root only). */
import { requireRoot } from '../../auth/index.js';
import { toWire } from '../../cluster/partition-layout.js';
import { parseJsonBounded } from '../../lib/json.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Route } from '../types.js';

export function clusterRoutes(s: HttpServices): Route[] {
  const path = '/api/v1/clusterconfig/ingestpartitions';
  return [
    {
      // Who digests each partition now (logsvc's own; the product has no such endpoint): the
      // layout's hosts, the owner and epoch from global state, the last reported checkpoint.
      method: 'GET',
      pattern: '/api/v1/clusterconfig/digest',
      body: 'none',
      handle: (req) => {
        requireRoot(apiPrincipal(s, req), 'reading the digest owners');
        const state = s.store.state;
        return json(
          200,
          state.partitions.map((hosts, partition) => {
            const e = state.cluster.epochs.get(partition);
            // digesting: the owner has reported progress in its epoch (it has started digesting).
            return { partition, hosts, owner: e?.node ?? null, epoch: e?.epoch ?? 0, checkpoint: e?.checkpoint ?? 0, digesting: e?.reported ?? false };
          }),
        );
      },
    },
    {
      // Segment replication (logsvc's own): factor, under-replicated segments, lag, transfers,
      // and per node the segments and bytes it holds. 404 on a single node.
      method: 'GET',
      pattern: '/api/v1/clusterconfig/segments',
      body: 'none',
      handle: (req) => {
        requireRoot(apiPrincipal(s, req), 'reading segment replication');
        const r = s.replication?.() ?? null;
        if (r === null) return json(404, { error: 'not a cluster: segments are not replicated on a single node' });
        return json(200, r);
      },
    },
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
