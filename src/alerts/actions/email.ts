/**
 * The mail an email action sends: subject and body from its templates (defaults when empty). A
 * body template that uses {events_html} is sent as HTML, any other as plain text.
 */
import type { ActionProperties } from '../action-input.js';
import type { MailMessage } from '../smtp.js';
import type { MessageRenderer } from '../template.js';

export const DEFAULT_SUBJECT = 'logsvc alert: {alert_name}';
export const DEFAULT_BODY = [
  'Alert "{alert_name}" triggered at {alert_triggered_timestamp} in repository {repo_name}.',
  '',
  '{alert_description}',
  '',
  'Query: {query_string}',
  'Interval: {query_time_interval}',
  'Events: {event_count}',
  '{url}',
  '',
  '{events_str}',
  '',
].join('\n');

/** Subject and body rendered by `r`, against one budget. */
export function emailMessage(p: Extract<ActionProperties, { kind: 'email' }>, r: MessageRenderer): MailMessage {
  const subject = r.render(p.subjectTemplate === '' ? DEFAULT_SUBJECT : p.subjectTemplate).replace(/[\r\n]+/g, ' ');
  const template = p.bodyTemplate === '' ? DEFAULT_BODY : p.bodyTemplate;
  const body = r.render(template);
  return template.includes('{events_html}') ? { to: p.recipients, subject, html: body } : { to: p.recipients, subject, text: body };
}
