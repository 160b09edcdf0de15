/** Status (public), liveness, and the two health endpoints. */
import { requireRoot } from '../../auth/index.js';
import { renderHealthJson, renderHealthText } from '../../health/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, text, type Route } from '../types.js';

export function statusRoutes(s: HttpServices): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/api/v1/status',
      body: 'none',
      handle: () => {
        const status = s.health.status();
        return json(status === 'DOWN' ? 503 : 200, { status, version: s.version });
      },
    },
    {
      method: 'GET',
      pattern: '/api/v1/is-node-up',
      body: 'none',
      handle: () => (s.health.status() === 'DOWN' ? text(503, 'node is down') : text(200, 'node is up')),
    },
    {
      method: 'GET',
      pattern: '/api/v1/health',
      body: 'none',
      handle: (req) => {
        requireRoot(apiPrincipal(s, req), 'the text health endpoint');
        const report = s.health.report();
        return text(report.status === 'DOWN' ? 503 : 200, renderHealthText(report));
      },
    },
    {
      method: 'GET',
      pattern: '/api/v1/metrics',
      body: 'none',
      handle: (req) => {
        requireRoot(apiPrincipal(s, req), 'reading node metrics');
        return json(200, s.metrics(req.query.get('reset') === 'true'));
      },
    },
    {
      method: 'GET',
      pattern: '/api/v1/health-json',
      body: 'none',
      handle: (req) => {
        apiPrincipal(s, req);
        // 200 whatever the status: clients (humioctl) treat any other code as a failed call.
        return json(200, renderHealthJson(s.health.report()));
      },
    },
  ];
}
