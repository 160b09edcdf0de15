import t from 'tap';
import { renderTemplate } from '../../../src/alerts/index.js';
import { eventsHtml, eventsString, MessageRenderer, rowLine } from '../../../src/alerts/template.js';
import { slackRequest, webhookRequest } from '../../../src/alerts/actions/http-payloads.js';
import { emailMessage } from '../../../src/alerts/actions/email.js';
import type { TriggerContext } from '../../../src/alerts/trigger.js';

const row = (o: Record<string, string | number>): Record<string, string | number> => Object.assign(Object.create(null) as Record<string, string | number>, o);

const ctx: TriggerContext = {
  alertId: 'a1',
  alertName: 'High {errors}',
  description: 'desc "quoted"',
  queryString: 'level=ERROR | count()',
  queryStart: '10m',
  repositoryName: 'web',
  triggeredAt: Date.UTC(2024, 0, 2, 3, 4, 5, 678),
  startMs: 1_700_000_000_123,
  endMs: 1_700_000_600_123,
  rows: [row({ '@timestamp': 1, '@rawstring': 'line one', msg: 'say "hi"\n', 'My Field': 'spaced', 'a"b': 'quote-named' }), row({ x: '<b>', msg: 'second' })],
  eventCount: 7,
  warnings: ['w1', 'w2'],
  url: 'http://logs/web/search?query=x',
};
const inv = { actionId: 'act-1', invocationId: 'inv-1' };
const r = (tpl: string): string => renderTemplate(tpl, ctx, inv);

t.test('every simple variable and its alias', async (t) => {
  const expect: Record<string, string> = {
    alert_name: 'High {errors}',
    name: 'High {errors}',
    alert_description: 'desc "quoted"',
    description: 'desc "quoted"',
    alert_triggered_timestamp: '2024-01-02T03:04:05.678Z',
    triggered_timestamp: '2024-01-02T03:04:05.678Z',
    alert_id: 'a1',
    id: 'a1',
    alert_notifier_id: 'act-1',
    action_id: 'act-1',
    action_invocation_id: 'inv-1',
    event_count: '7',
    url: 'http://logs/web/search?query=x',
    query_string: 'level=ERROR | count()',
    query_time_start: '10m',
    query_time_end: 'now',
    query_time_interval: '10m -> now',
    query_start_ms: '1700000000123',
    query_end_ms: '1700000600123',
    query_start_s: '1700000000.123',
    query_end_s: '1700000600.123',
    warnings: 'w1\nw2',
    repo_name: 'web',
  };
  for (const [name, value] of Object.entries(expect)) t.equal(r(`<{${name}}>`), `<${value}>`, name);
  t.equal(r('{events}'), JSON.stringify(ctx.rows));
  t.equal(r('{events_str}'), 'line one\nx-><b>, msg->second');
  t.equal(r('{query_result_summary}'), r('{events_str}'));
  t.equal(r('{events_html}'), eventsHtml(ctx.rows));
});

t.test('field placeholders read the first row; field is JSON-escaped, field_raw is not', async (t) => {
  t.equal(r('{field:msg}'), 'say \\"hi\\"\\n');
  t.equal(r('{field_raw:msg}'), 'say "hi"\n');
  t.equal(r('{field:"My Field"}'), 'spaced');
  t.equal(r('{field_raw:"My Field"}'), 'spaced');
  t.equal(r('{field:"a\\"b"}'), 'quote-named', 'an escaped quote inside a quoted name');
  t.equal(r('{field:x}'), '', 'a field the first row lacks');
  t.equal(r('{field:@rawstring}'), 'line one');
});

t.test('one pass: substituted text is not expanded again; unknown and malformed placeholders stay', async (t) => {
  t.equal(r('{alert_name}'), 'High {errors}', 'a value that looks like a placeholder stays');
  t.equal(r('{nope} {Alert_Name} {alert_name'), '{nope} {Alert_Name} {alert_name');
  t.equal(r('{}{{alert_id}}'), '{}{a1}');
  t.equal(r(''), '');
  t.equal(r('no placeholders'), 'no placeholders');
});

t.test('events_html: columns in encounter order, values escaped, missing cells empty', async (t) => {
  t.equal(
    eventsHtml([row({ a: '1', b: '<2>' }), row({ c: '&', a: '"' })]),
    '<table><tr><th>a</th><th>b</th><th>c</th></tr><tr><td>1</td><td>&lt;2&gt;</td><td></td></tr><tr><td>&quot;</td><td></td><td>&amp;</td></tr></table>',
  );
  t.equal(eventsHtml([]), '<table><tr></tr></table>');
});

t.test('rowLine and eventsString', async (t) => {
  t.equal(rowLine(row({ '@rawstring': 'raw', a: 'b' })), 'raw');
  t.equal(rowLine(row({ _count: '3', host: 'a' })), '_count->3, host->a');
  t.equal(eventsString([]), '');
});

t.test('a renderer renders like renderTemplate within its budget', async (t) => {
  const tpl = '{alert_name} {events} {field:msg} {events_str}';
  t.equal(new MessageRenderer(ctx, inv, 1_000_000).render(tpl), r(tpl));
});

t.test('a message budget: each variable is computed once, rendering stops once past the budget', async (t) => {
  let stringified = 0;
  const rows = Array.from({ length: 50 }, (_, i) => row({ '@rawstring': 'x'.repeat(1000), n: i }));
  // JSON.stringify(rows) calls the array's toJSON: this counts how often {events} is computed.
  Object.defineProperty(rows, 'toJSON', { value: () => (stringified++, [...rows]), enumerable: false });
  const big: TriggerContext = { ...ctx, rows };
  const template = '{events}'.repeat(8 * 1024); // 64 KB of template, ~400 MB if rendered in full
  const r1 = new MessageRenderer(big, inv, 1_000_000);
  const started = Date.now();
  t.throws(() => r1.render(template), { code: 'E_ACTION_FAILED', transient: false, message: /rendered message reached \d+ bytes, more than alerts\.max_message_bytes \(1000000\)/ });
  t.ok(Date.now() - started < 2000, 'stopped early');
  t.equal(stringified, 1, '{events} computed once');
  t.ok(r1.usedBytes <= 1_000_000 + 60_000, `stopped within one value past the budget (${r1.usedBytes})`);
  t.equal(new MessageRenderer(big, inv, 10_000_000).render('{events}{events}{events}').length, 3 * JSON.stringify(rows).length);
});

t.test('headers, Slack fields and the email subject count against the same budget as the body', async (t) => {
  const huge = 'y'.repeat(600);
  const c: TriggerContext = { ...ctx, alertName: huge };
  const webhook = { kind: 'webhook' as const, url: 'http://x', method: 'POST', headers: [{ header: 'X-A', value: '{alert_name}' }], bodyTemplate: '{alert_name}', ignoreSSL: false, useProxy: false };
  t.ok(webhookRequest(webhook, new MessageRenderer(c, inv, 1300)), 'header and body fit in 1300 bytes');
  t.throws(() => webhookRequest(webhook, new MessageRenderer(c, inv, 1000)), { code: 'E_ACTION_FAILED' }, 'together they do not fit in 1000');
  t.throws(() => webhookRequest({ ...webhook, headers: [{ header: 'X-A', value: '{alert_name}{alert_name}' }], bodyTemplate: 'small' }, new MessageRenderer(c, inv, 1000)), { code: 'E_ACTION_FAILED' }, 'headers alone');
  const slack = { kind: 'slack' as const, url: 'http://x', fields: [{ fieldName: 'a', value: '{alert_name}' }, { fieldName: 'b', value: '{alert_name}' }], useProxy: false };
  t.throws(() => slackRequest(slack, new MessageRenderer(c, inv, 1000)), { code: 'E_ACTION_FAILED' }, 'Slack fields together');
  const mail = { kind: 'email' as const, recipients: ['a@b.c'], subjectTemplate: '{alert_name}', bodyTemplate: '{alert_name}', useProxy: false };
  t.throws(() => emailMessage(mail, new MessageRenderer(c, inv, 1000)), { code: 'E_ACTION_FAILED' }, 'subject and body together');
  t.equal(emailMessage(mail, new MessageRenderer(c, inv, 1300)).subject, huge);
});

t.test('webhook header values rendered from data lose their line breaks', async (t) => {
  const c: TriggerContext = { ...ctx, alertName: 'a\r\nInjected: yes\n' };
  const webhook = { kind: 'webhook' as const, url: 'http://x', method: 'POST', headers: [{ header: 'X-A', value: '{alert_name}' }], bodyTemplate: '{alert_name}', ignoreSSL: false, useProxy: false };
  const req = webhookRequest(webhook, new MessageRenderer(c, inv, 10_000));
  t.equal(req.headers['x-a'], 'a Injected: yes ');
  t.equal(req.body, 'a\r\nInjected: yes\n', 'the body keeps them');
});
