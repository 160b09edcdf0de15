/**
 * Message templates (api-facts §5.4): a single left-to-right search and replace of `{name}`
 * placeholders, `{field:NAME}` / `{field:"Name With Spaces"}` (first row's value, JSON-escaped)
 * and `{field_raw:NAME}` (unescaped). Replacement text is never scanned again, so values that look
 * like placeholders stay as they are. Unknown placeholders are left untouched.
 */
import type { ResultRow } from '../query/index.js';
import type { Invocation, TriggerContext } from './trigger.js';

const PLACEHOLDER = /\{(?:(field|field_raw):(?:"((?:[^"\\]|\\.)*)"|([^{}"]+))|([a-z_]+))\}/g;

const iso = (ms: number): string => new Date(ms).toISOString();
const seconds = (ms: number): string => (ms / 1000).toFixed(3);
const jsonEscaped = (s: string): string => JSON.stringify(s).slice(1, -1);

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const html = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** A row as one line: its @rawstring when it has one, otherwise `name->value` pairs (the query API's text form). */
export function rowLine(row: ResultRow): string {
  const raw = row['@rawstring'];
  if (raw !== undefined) return String(raw);
  return Object.keys(row)
    .map((k) => `${k}->${row[k]}`)
    .join(', ');
}

/** {events_str}: one line per row. */
export function eventsString(rows: readonly ResultRow[]): string {
  return rows.map(rowLine).join('\n');
}

/** {events_html}: a table whose columns are the field names in the order they are first met. */
export function eventsHtml(rows: readonly ResultRow[]): string {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    for (const k of Object.keys(r)) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
  }
  const head = `<tr>${columns.map((c) => `<th>${html(c)}</th>`).join('')}</tr>`;
  const body = rows.map((r) => `<tr>${columns.map((c) => `<td>${r[c] === undefined ? '' : html(String(r[c]))}</td>`).join('')}</tr>`).join('');
  return `<table>${head}${body}</table>`;
}

/** The value of a simple placeholder, or undefined for names that are not variables. */
function variable(name: string, t: TriggerContext, inv: Invocation): string | undefined {
  switch (name) {
    case 'alert_name':
    case 'name':
      return t.alertName;
    case 'alert_description':
    case 'description':
      return t.description;
    case 'alert_triggered_timestamp':
    case 'triggered_timestamp':
      return iso(t.triggeredAt);
    case 'alert_id':
    case 'id':
      return t.alertId;
    case 'alert_notifier_id':
    case 'action_id':
      return inv.actionId;
    case 'action_invocation_id':
      return inv.invocationId;
    case 'event_count':
      return String(t.eventCount);
    case 'url':
      return t.url;
    case 'query_string':
      return t.queryString;
    case 'query_result_summary':
    case 'events_str':
      return eventsString(t.rows);
    case 'query_time_start':
      return t.queryStart;
    case 'query_time_end':
      return 'now';
    case 'query_time_interval':
      return `${t.queryStart} -> now`;
    case 'query_start_ms':
      return String(t.startMs);
    case 'query_end_ms':
      return String(t.endMs);
    case 'query_start_s':
      return seconds(t.startMs);
    case 'query_end_s':
      return seconds(t.endMs);
    case 'warnings':
      return t.warnings.join('\n');
    case 'repo_name':
      return t.repositoryName;
    case 'events':
      return JSON.stringify(t.rows);
    case 'events_html':
      return eventsHtml(t.rows);
    default:
      return undefined;
  }
}

export function renderTemplate(template: string, t: TriggerContext, inv: Invocation): string {
  const first = t.rows[0];
  return template.replace(PLACEHOLDER, (whole, kind: string | undefined, quoted: string | undefined, bare: string | undefined, simple: string | undefined) => {
    if (simple !== undefined) return variable(simple, t, inv) ?? whole;
    const field = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare!;
    const v = first?.[field];
    const value = v === undefined ? '' : String(v);
    return kind === 'field' ? jsonEscaped(value) : value;
  });
}
