/**
 * The legacy REST alert API (http-interface.md "Alerts", api-facts §5.2): list, get, create, update
 * (PUT) and delete (204) at `/api/v1/repositories/<repository>/alerts` (and the older
 * `/dataspaces/` spelling; a trailing slash is accepted, humioctl posts to `.../alerts/`). An alert
 * may be addressed by its id or, when unambiguous, its name. The stored alert is returned with its
 * id, its last trigger time and its last error.
 */
import { LogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import { REST_FIELDS, type AlertInput, type AlertView } from '../../alerts/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Route } from '../types.js';

export function restAlert(v: AlertView): Record<string, unknown> {
  const a = v.alert;
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    query: { queryString: a.queryString, start: a.queryStart, end: 'now', isLive: true },
    throttleTimeMillis: a.throttleTimeMillis,
    throttleField: a.throttleField === '' ? null : a.throttleField,
    silenced: a.silenced,
    notifiers: [...a.actions],
    labels: [...a.labels],
    queryOwnershipType: a.ownership.kind === 'user' ? 'User' : 'Organization',
    runAsUserId: a.ownership.kind === 'user' ? a.ownership.userId : null,
    timeOfLastTrigger: v.lastTriggeredAt,
    lastError: v.lastError,
    lastErrorTime: v.lastErrorAt,
  };
}

/** The request body as an AlertInput; structural problems are 400s naming the field. */
function alertInput(body: Buffer, maxDepth: number): AlertInput {
  const b = parseJsonBounded(body.toString('utf8'), maxDepth, 'alert');
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new LogsvcError('E_VALIDATION', 'the request body must be a JSON object with the alert fields (name, query, throttleTimeMillis, silenced, notifiers)');
  const o = b as Record<string, unknown>;
  const q = o.query;
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw new LogsvcError('E_VALIDATION', 'query: required, an object with "queryString" and "start"');
  const query = q as Record<string, unknown>;
  // Alerts always end now; old clients send "" for end.
  if (query.end !== undefined && query.end !== null && query.end !== '' && query.end !== 'now') throw new LogsvcError('E_VALIDATION', 'query.end: an alert\'s window always ends now; leave end out or send "now"');
  return {
    name: o.name,
    description: o.description,
    queryString: query.queryString,
    queryStart: query.start,
    throttleTimeMillis: o.throttleTimeMillis,
    throttleField: o.throttleField,
    silenced: o.silenced,
    actions: o.notifiers,
    labels: o.labels,
    runAsUserId: o.runAsUserId,
    ownershipType: o.queryOwnershipType,
  };
}

export function alertRoutes(s: HttpServices): Route[] {
  const routes: Route[] = [];
  for (const prefix of ['repositories', 'dataspaces']) {
    const base = `/api/v1/${prefix}/:repo/alerts`;
    routes.push(
      {
        method: 'GET',
        pattern: base,
        body: 'none',
        handle: (req) => json(200, s.alerts.list(apiPrincipal(s, req), req.params.repo!).map(restAlert)),
      },
      {
        method: 'POST',
        pattern: base,
        body: 'api',
        handle: async (req, body) => {
          const p = apiPrincipal(s, req);
          return json(200, restAlert(await s.alerts.create(p, req.params.repo!, alertInput(body, s.maxJsonDepth), REST_FIELDS)));
        },
      },
      {
        method: 'GET',
        pattern: `${base}/:alert`,
        body: 'none',
        handle: (req) => json(200, restAlert(s.alerts.get(apiPrincipal(s, req), req.params.repo!, req.params.alert!))),
      },
      {
        method: 'PUT',
        pattern: `${base}/:alert`,
        body: 'api',
        handle: async (req, body) => {
          const p = apiPrincipal(s, req);
          return json(200, restAlert(await s.alerts.update(p, req.params.repo!, req.params.alert!, alertInput(body, s.maxJsonDepth), REST_FIELDS)));
        },
      },
      {
        method: 'DELETE',
        pattern: `${base}/:alert`,
        body: 'none',
        handle: async (req) => {
          await s.alerts.delete(apiPrincipal(s, req), req.params.repo!, req.params.alert!);
          return { status: 204 };
        },
      },
    );
  }
  return routes;
}
