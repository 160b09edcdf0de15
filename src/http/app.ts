/** Every route the node serves, assembled from the route modules. */
import { Router } from './router.js';
import type { Route } from './types.js';
import type { HttpServices } from './context.js';
import { statusRoutes } from './routes/status.js';
import { clusterRoutes } from './routes/cluster.js';
import { graphqlRoutes } from './routes/graphql.js';
import { userRoutes } from './routes/users.js';
import { explorerRoutes } from './routes/explorer.js';
import { ingestRoutes } from './routes/ingest.js';
import { queryRoutes } from './routes/query.js';
import { fileRoutes } from './routes/files.js';
import { alertRoutes } from './routes/alerts.js';
import { alertNotifierRoutes } from './routes/alert-notifiers.js';
import { preBodyAuth } from './pre-auth.js';
import { gateWhileStopping } from './stopping-gate.js';
import { doorRoutes } from './routes/doors.js';
import { metricsRoutes } from './routes/metrics.js';
import { uiApiRoutes, uiRoutes } from './routes/ui.js';

export function buildRouter(s: HttpServices): Router {
  const router = new Router();
  // A cluster: management and query requests first see every change other nodes completed (one
  // watermark look-up); ingest does not wait for it.
  const synced = (rs: Route[]): Route[] =>
    !s.store.isShared
      ? rs
      : rs.map((r) => ({
          ...r,
          handle: async (req, body) => {
            await s.store.sync();
            return r.handle(req, body);
          },
        }));
  const routes = [...statusRoutes(s), ...synced([...clusterRoutes(s), ...graphqlRoutes(s), ...userRoutes(s)]), ...ingestRoutes(s), ...synced([...queryRoutes(s), ...fileRoutes(s), ...alertRoutes(s), ...alertNotifierRoutes(s)]), ...doorRoutes(s), ...(s.explorer ? explorerRoutes() : [])];
  routes.push(...metricsRoutes(s), ...uiApiRoutes(s), ...(s.ui ? uiRoutes() : []));
  for (const r of routes) router.add(r);
  // Every route with a body, whichever module adds it: credentials before the body (issue 24).
  // A stopping node refuses new queries and ingest first (src/http/stopping-gate.ts).
  router.beforeBody = gateWhileStopping(() => s.health.isStopping(), preBodyAuth(s));
  return router;
}
