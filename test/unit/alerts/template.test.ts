import t from 'tap';
import { renderTemplate } from '../../../src/alerts/index.js';
import { eventsHtml, eventsString, rowLine } from '../../../src/alerts/template.js';
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
