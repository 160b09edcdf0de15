/**
 * Message templates (api-facts §5.4): a single left-to-right search and replace of `{name}`
 * placeholders, `{field:NAME}` / `{field:"Name With Spaces"}` (first row's value, JSON-escaped)
 * and `{field_raw:NAME}` (unescaped). Replacement text is never scanned again, so values that look
 * like placeholders stay as they are. Unknown placeholders are left untouched.
 *
 * A MessageRenderer renders every template of one message (headers, body, subject, Slack fields)
 * against one byte budget (`alerts.max_message_bytes`): each variable is computed at most once
 * however often it appears, and rendering stops as soon as the message passes the budget, so a
 * 64 KB template repeating {events} costs at most the budget, never its product.
 */
import type { ResultRow } from '../query/index.js';
import { permanent, type DeliveryError } from './errors.js';
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

/** The failure of a message past the budget (permanent: the same trigger renders the same). */
export function messageTooLarge(bytes: number, maxBytes: number): DeliveryError {
  return permanent('E_ACTION_FAILED', `the rendered message reached ${bytes} bytes, more than alerts.max_message_bytes (${maxBytes}); use fewer or smaller events in the template`);
}

export class MessageRenderer {
  private readonly values = new Map<string, string | undefined>();
  private bytes = 0;

  constructor(
    readonly trigger: TriggerContext,
    readonly invocation: Invocation,
    readonly maxBytes: number,
  ) {}

  /** Bytes of the message so far. */
  get usedBytes(): number {
    return this.bytes;
  }

  /** Counts `text` as part of the message (rendered parts, fixed framing); throws past the budget. */
  charge(text: string): string {
    this.bytes += Buffer.byteLength(text, 'utf8');
    if (this.bytes > this.maxBytes) throw messageTooLarge(this.bytes, this.maxBytes);
    return text;
  }

  /** A variable's value, computed on first use. */
  private variable(name: string): string | undefined {
    if (this.values.has(name)) return this.values.get(name);
    const v = variable(name, this.trigger, this.invocation);
    this.values.set(name, v);
    return v;
  }

  private field(kind: string | undefined, quoted: string | undefined, bare: string): string {
    const name = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare;
    const key = `${kind}:${name}`;
    const hit = this.values.get(key);
    if (hit !== undefined) return hit;
    const v = this.trigger.rows[0]?.[name];
    const value = v === undefined ? '' : String(v);
    const out = kind === 'field' ? jsonEscaped(value) : value;
    this.values.set(key, out);
    return out;
  }

  /** `template` rendered, its bytes counted against the budget. */
  render(template: string): string {
    const parts: string[] = [];
    let last = 0;
    for (const m of template.matchAll(PLACEHOLDER)) {
      const [whole, kind, quoted, bare, simple] = m;
      parts.push(this.charge(template.slice(last, m.index)));
      const value = simple !== undefined ? (this.variable(simple) ?? whole) : this.field(kind, quoted, bare ?? '');
      parts.push(this.charge(value));
      last = m.index + whole.length;
    }
    parts.push(this.charge(template.slice(last)));
    return parts.join('');
  }
}

/** One template on its own (tests, previews): a renderer of its own, unbounded unless told. */
export function renderTemplate(template: string, t: TriggerContext, inv: Invocation, maxBytes = Number.POSITIVE_INFINITY): string {
  return new MessageRenderer(t, inv, maxBytes).render(template);
}
