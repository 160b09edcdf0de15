/**
 * The HTTP requests of the HTTP-based action types: a webhook (method, headers and body from the
 * user's templates), a Slack incoming webhook (attachment fields rendered from templates), and the
 * documented event APIs of PagerDuty (Events API v2), OpsGenie (Alert API v2) and VictorOps
 * (REST endpoint integration). Pure functions: properties + trigger in, request out.
 */
import type { ActionProperties } from '../action-input.js';
import type { OutboundRequest } from '../outbound-http.js';
import { eventsString, type MessageRenderer } from '../template.js';
import type { Invocation, TriggerContext } from '../trigger.js';

type Props<K extends ActionProperties['kind']> = Extract<ActionProperties, { kind: K }>;

const JSON_TYPE = { 'content-type': 'application/json' };

const iso = (ms: number): string => new Date(ms).toISOString();
const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 3)}...`);

/** The webhook body when no template is given: the alert, the window and the events, as JSON. */
export function defaultWebhookBody(t: TriggerContext, inv: Invocation): string {
  return JSON.stringify({
    repository: t.repositoryName,
    timestamp: iso(t.triggeredAt),
    alert: { id: t.alertId, name: t.alertName, description: t.description, query: { queryString: t.queryString, start: t.queryStart, end: 'now' }, notifierID: inv.actionId },
    warnings: t.warnings.join('\n'),
    events: t.rows,
    numberOfEvents: t.eventCount,
    url: t.url,
  });
}

/** Headers and body rendered by `r`, so both count against the message budget. */
export function webhookRequest(p: Props<'webhook'>, r: MessageRenderer): OutboundRequest {
  const headers: Record<string, string> = {};
  // A header value cannot hold a line break (undici refuses it, and it would split the header):
  // values from the data are joined onto one line.
  for (const h of p.headers) headers[h.header.toLowerCase()] = r.render(h.value).replace(/[\r\n]+/g, ' ');
  const withBody = p.method !== 'GET' && p.method !== 'HEAD';
  if (withBody && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const body = withBody ? (p.bodyTemplate === '' ? r.charge(defaultWebhookBody(r.trigger, r.invocation)) : r.render(p.bodyTemplate)) : undefined;
  return { method: p.method, url: p.url, headers, body, ignoreTls: p.ignoreSSL };
}

/** Slack fields when the action lists none (the product's examples). */
const DEFAULT_SLACK_FIELDS = [
  { fieldName: 'Query', value: '{query_string}' },
  { fieldName: 'Repository', value: '{repo_name}' },
  { fieldName: 'Time Interval', value: '{query_time_interval}' },
  { fieldName: 'Events', value: '{event_count}' },
];

/** Every field rendered by `r`, against one budget. */
export function slackRequest(p: Props<'slack'>, r: MessageRenderer): OutboundRequest {
  const t = r.trigger;
  const fields = (p.fields.length === 0 ? DEFAULT_SLACK_FIELDS : p.fields).map((f) => ({ title: r.charge(f.fieldName), value: r.render(f.value), short: false }));
  const body = {
    text: `Alert "${t.alertName}" triggered (${t.eventCount} events) <${t.url}|open the search>`,
    attachments: [{ color: 'danger', fallback: `Alert ${t.alertName} triggered`, fields }],
  };
  return { method: 'POST', url: p.url, headers: { ...JSON_TYPE }, body: JSON.stringify(body) };
}

/** Details every incident-tool payload carries. */
function details(t: TriggerContext): Record<string, string> {
  return {
    description: t.description,
    query: t.queryString,
    repository: t.repositoryName,
    interval: `${t.queryStart} -> now`,
    event_count: String(t.eventCount),
    url: t.url,
  };
}

export function pagerDutyRequest(p: Props<'pagerduty'>, endpoint: string, t: TriggerContext): OutboundRequest {
  const body = {
    routing_key: p.routingKey,
    event_action: 'trigger',
    payload: {
      summary: clip(`${t.alertName}: ${t.eventCount} events in ${t.repositoryName}`, 1024),
      source: 'logsvc',
      severity: p.severity,
      timestamp: iso(t.triggeredAt),
      group: t.repositoryName,
      class: 'alert',
      custom_details: { ...details(t), events: t.rows },
    },
    links: [{ href: t.url, text: 'Open the search' }],
  };
  return { method: 'POST', url: endpoint, headers: { ...JSON_TYPE }, body: JSON.stringify(body) };
}

export function opsGenieRequest(p: Props<'opsgenie'>, t: TriggerContext): OutboundRequest {
  const body = {
    message: clip(t.alertName, 130),
    // Repeated triggers of one alert update one open OpsGenie alert instead of piling up.
    alias: clip(`logsvc-${t.alertId}`, 512),
    description: clip(`${t.description}\n\n${eventsString(t.rows)}`.trim(), 15000),
    details: details(t),
    source: 'logsvc',
  };
  return { method: 'POST', url: `${p.apiUrl.replace(/\/+$/, '')}/v2/alerts`, headers: { ...JSON_TYPE, authorization: `GenieKey ${p.genieKey}` }, body: JSON.stringify(body) };
}

export function victorOpsRequest(p: Props<'victorops'>, t: TriggerContext): OutboundRequest {
  const body = {
    message_type: p.messageType,
    entity_id: `logsvc-${t.alertId}`,
    entity_display_name: t.alertName,
    state_message: clip(`${t.description}\n\n${eventsString(t.rows)}`.trim(), 20000),
    state_start_time: Math.floor(t.triggeredAt / 1000),
    monitoring_tool: 'logsvc',
    alert_url: t.url,
    ...details(t),
  };
  return { method: 'POST', url: p.notifyUrl, headers: { ...JSON_TYPE }, body: JSON.stringify(body) };
}
