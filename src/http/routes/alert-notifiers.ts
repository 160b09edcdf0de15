/**
 * The legacy REST notifier API (api-facts §5.3), which old clients still call: list, get, create
 * and delete (204) at `/api/v1/repositories/<repository>/alertnotifiers[/<id>]` (and the
 * `/dataspaces/` spelling), over the same actions as GraphQL. A notifier is
 * `{"id", "entity", "name", "properties"}`, where webhook headers and Slack fields are maps
 * (name -> template) rather than lists. Updating (PUT) is not served: delete and create again.
 */
import { LogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import type { ActionView } from '../../alerts/index.js';
import type { ActionKind } from '../../global/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Route } from '../types.js';

const ENTITY: Record<ActionKind, string> = {
  webhook: 'WebHookNotifier',
  slack: 'SlackNotifier',
  email: 'EmailNotifier',
  repository: 'HumioRepoNotifier',
  pagerduty: 'PagerDutyNotifier',
  opsgenie: 'OpsGenieNotifier',
  victorops: 'VictorOpsNotifier',
};
const KIND = new Map(Object.entries(ENTITY).map(([kind, entity]) => [entity, kind as ActionKind]));

export function restNotifier(v: ActionView): Record<string, unknown> {
  const { kind, ...props } = v.props;
  const properties: Record<string, unknown> = { ...props };
  if (v.props.kind === 'webhook') properties.headers = Object.fromEntries(v.props.headers.map((h) => [h.header, h.value]));
  if (v.props.kind === 'slack') properties.fields = Object.fromEntries(v.props.fields.map((f) => [f.fieldName, f.value]));
  return { id: v.id, entity: ENTITY[kind], name: v.name, properties };
}

/** A map `{name: value}` as the list of entries the action input takes; a list is passed as is. */
function entries(v: unknown, key: string, value: string): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  return Object.entries(v as Record<string, unknown>).map(([k, x]) => ({ [key]: k, [value]: x }));
}

function notifierInput(body: Buffer, maxDepth: number): { kind: ActionKind; name: unknown; props: Record<string, unknown> } {
  const b = parseJsonBounded(body.toString('utf8'), maxDepth, 'notifier');
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new LogsvcError('E_VALIDATION', 'the request body must be a JSON object with "entity", "name" and "properties"');
  const o = b as Record<string, unknown>;
  const kind = typeof o.entity === 'string' ? KIND.get(o.entity) : undefined;
  if (kind === undefined) {
    const entity = typeof o.entity === 'string' ? `"${o.entity.slice(0, 100)}"` : 'missing';
    throw new LogsvcError('E_VALIDATION', `entity: ${entity}; one of ${[...KIND.keys()].join(', ')} (SlackPostMessageNotifier is not built)`);
  }
  const p = o.properties ?? {};
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new LogsvcError('E_VALIDATION', 'properties: must be an object');
  const props = { ...(p as Record<string, unknown>) };
  if (kind === 'webhook') props.headers = entries(props.headers ?? {}, 'header', 'value');
  if (kind === 'slack') props.fields = entries(props.fields ?? {}, 'fieldName', 'value');
  return { kind, name: o.name, props };
}

export function alertNotifierRoutes(s: HttpServices): Route[] {
  const routes: Route[] = [];
  for (const prefix of ['repositories', 'dataspaces']) {
    const base = `/api/v1/${prefix}/:repo/alertnotifiers`;
    routes.push(
      {
        method: 'GET',
        pattern: base,
        body: 'none',
        handle: (req) => json(200, s.actions.list(apiPrincipal(s, req), req.params.repo!).map(restNotifier)),
      },
      {
        method: 'POST',
        pattern: base,
        body: 'api',
        handle: async (req, body) => {
          const p = apiPrincipal(s, req);
          const i = notifierInput(body, s.maxJsonDepth);
          return json(200, restNotifier(await s.actions.create(p, req.params.repo!, i.kind, i.name, i.props)));
        },
      },
      {
        method: 'GET',
        pattern: `${base}/:notifier`,
        body: 'none',
        handle: (req) => json(200, restNotifier(s.actions.get(apiPrincipal(s, req), req.params.repo!, req.params.notifier!))),
      },
      {
        method: 'DELETE',
        pattern: `${base}/:notifier`,
        body: 'none',
        handle: async (req) => {
          await s.actions.delete(apiPrincipal(s, req), req.params.repo!, req.params.notifier!);
          return { status: 204 };
        },
      },
    );
  }
  return routes;
}
