/**
 * Alerts firing on a real node: the scheduler runs each alert's query over its window, triggers on
 * rows, renders message templates, runs actions in order with retries, throttles by time and by
 * field, leaves silenced alerts and alerts without actions alone, refuses internal addresses and
 * redirects, re-ingests results through a repository action, sends mail over SMTP, and posts the
 * Slack, PagerDuty, OpsGenie and VictorOps payloads. Real receivers (HTTP on 127.0.0.1 and
 * 127.0.0.2, SMTP on 127.0.0.1) see what the node sends; intervals are short so this runs in
 * seconds.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startReceiver } from '../helpers/receiver.js';
import { startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { gql } from '../helpers/http.js';
import { createRepo, ingestStructured, mustGql, queryJson, waitForCount, type KnownEvent } from '../helpers/query.js';
import { createAlert, createWebhook, getAlert, restAlert, sleep, waitForAlert } from '../helpers/alerts.js';

t.setTimeout(240_000);

const INTERVAL_MS = 250;
const rx = await startReceiver(t);
const internal = await startReceiver(t, '127.0.0.2');
const smtp = await startSmtpReceiver(t);
const node = await startNode(t, {
  config: [
    '[health]',
    'grace_period_seconds = 600',
    '[digest]',
    'partitions = 2',
    'worker_threads = 1',
    '[alerts]',
    `evaluate_interval_ms = ${INTERVAL_MS}`,
    'max_concurrent_evaluations = 4',
    'action_timeout_ms = 3000',
    'action_retries = 2',
    'retry_backoff_ms = 150',
    'allow_targets = ["127.0.0.1/32"]',
    `pagerduty_url = "${rx.url}/pagerduty"`,
    'smtp_host = "127.0.0.1"',
    `smtp_port = ${smtp.port}`,
    'smtp_sender = "alerts@logsvc.test"',
    '',
  ].join('\n'),
});
const { url, adminToken: admin } = node;

const event = (attributes: Record<string, string>, tags: Record<string, string> = { host: 'web-1' }): KnownEvent => ({
  timestamp: Date.now(),
  rawstring: Object.entries(attributes)
    .map(([k, v]) => `${k}=${v}`)
    .join(' '),
  attributes,
  tags,
});

/** Lines `key=value` -> object (the first "=" splits). */
function kvLines(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of body.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const TEMPLATE = [
  'alert_name={alert_name}',
  'name={name}',
  'alert_description={alert_description}',
  'description={description}',
  'alert_triggered_timestamp={alert_triggered_timestamp}',
  'triggered_timestamp={triggered_timestamp}',
  'alert_id={alert_id}',
  'id={id}',
  'alert_notifier_id={alert_notifier_id}',
  'action_id={action_id}',
  'action_invocation_id={action_invocation_id}',
  'event_count={event_count}',
  'url={url}',
  'query_string={query_string}',
  'query_result_summary={query_result_summary}',
  'query_time_start={query_time_start}',
  'query_time_end={query_time_end}',
  'query_time_interval={query_time_interval}',
  'query_start_ms={query_start_ms}',
  'query_end_ms={query_end_ms}',
  'query_start_s={query_start_s}',
  'query_end_s={query_end_s}',
  'warnings={warnings}',
  'repo_name={repo_name}',
  'events={events}',
  'events_html={events_html}',
  'field={field:msg}',
  'field_raw={field_raw:msg}',
  'field_spaces={field:"Name With Spaces"}',
  'field_missing={field:nothere}',
  'unknown={not_a_variable}',
].join('\n');

t.test('an alert fires within seconds with every template variable rendered; actions run in order; then throttled by time', async (t) => {
  const repo = await createRepo(url, admin, 'fire');
  const first = await createWebhook(url, admin, 'fire', 'first', `${rx.url}/fire/first`, { bodyTemplate: TEMPLATE, headers: [{ header: 'X-Alert', value: '{alert_name}' }, { header: 'Content-Type', value: 'text/plain' }] });
  const second = await createWebhook(url, admin, 'fire', 'second', `${rx.url}/fire/second`);
  const alert = await createAlert(url, admin, 'fire', {
    name: 'errors',
    description: 'errors on the web tier',
    query: { queryString: 'level=ERROR', start: '1h' },
    throttleTimeMillis: 3_600_000,
    notifiers: [first, second],
  });
  const sent = Date.now();
  await ingestStructured(url, repo.ingestToken, [
    event({ level: 'ERROR', msg: 'disk "sda" full', n: '1', 'Name With Spaces': 'spaced' }),
    event({ level: 'INFO', msg: 'fine', n: '2' }),
    event({ level: 'ERROR', msg: 'disk "sda" full', n: '3', 'Name With Spaces': 'spaced' }),
    event({ level: 'INFO', msg: 'fine', n: '4' }),
    event({ level: 'ERROR', msg: 'disk "sda" full', n: '5', 'Name With Spaces': 'spaced' }),
  ]);
  const [req] = await rx.waitFor('/fire/first', 1, 15_000);
  t.ok(req!.at - sent < 10_000, `fired ${req!.at - sent} ms after ingest`);
  t.equal(req!.method, 'POST');
  t.equal(req!.headers['x-alert'], 'errors', 'header values are templates too');
  t.equal(req!.headers['content-type'], 'text/plain');

  const v = kvLines(req!.body);
  t.equal(v.alert_name, 'errors');
  t.equal(v.name, 'errors');
  t.equal(v.alert_description, 'errors on the web tier');
  t.equal(v.description, 'errors on the web tier');
  t.equal(v.alert_id, alert.id);
  t.equal(v.id, alert.id);
  t.equal(v.alert_notifier_id, first);
  t.equal(v.action_id, first);
  t.match(v.action_invocation_id!, UUID);
  t.equal(v.event_count, '3');
  t.equal(v.query_string, 'level=ERROR');
  t.equal(v.query_time_start, '1h');
  t.equal(v.query_time_end, 'now');
  t.equal(v.query_time_interval, '1h -> now');
  const startMs = Number(v.query_start_ms);
  const endMs = Number(v.query_end_ms);
  t.equal(endMs - startMs, 3_600_000, 'the window is the alert\'s start to now');
  t.ok(Math.abs(endMs - req!.at) < 10_000, 'the window ends at the trigger');
  t.equal(v.query_start_s, (startMs / 1000).toFixed(3));
  t.equal(v.query_end_s, (endMs / 1000).toFixed(3));
  t.equal(v.alert_triggered_timestamp, new Date(Date.parse(v.alert_triggered_timestamp!)).toISOString(), 'ISO 8601');
  t.ok(Math.abs(Date.parse(v.triggered_timestamp!) - req!.at) < 10_000);
  t.equal(v.warnings, '');
  t.equal(v.repo_name, 'fire');
  t.ok(v.url!.startsWith(`${url}/fire/search?`), v.url!);
  t.equal(new URL(v.url!).searchParams.get('query'), 'level=ERROR');
  const events = JSON.parse(v.events!) as Record<string, unknown>[];
  t.equal(events.length, 3);
  t.strictSame(events.map((e) => e.n).sort(), ['1', '3', '5'], 'exactly the matching events');
  t.ok(events.every((e) => e.level === 'ERROR' && e['#host'] === 'web-1' && typeof e['@timestamp'] === 'number'));
  // events_str / query_result_summary: one line per event (here each event's @rawstring).
  const lines = req!.body.split('\n');
  const at = lines.findIndex((l) => l.startsWith('query_result_summary='));
  const summaryLines = [lines[at]!.slice('query_result_summary='.length), lines[at + 1], lines[at + 2]];
  t.ok(summaryLines.every((l) => /^level=ERROR msg=disk "sda" full n=\d/.test(l ?? '')), 'the summary lists the 3 events, one per line');
  t.notMatch(lines[at + 3], /^level=ERROR/, 'and no more');
  t.match(v.query_result_summary, /^level=ERROR msg=disk "sda" full n=\d/);
  t.match(v.events_html, /^<table><tr>(<th>[^<]+<\/th>)+<\/tr>(<tr>(<td>[^<]*<\/td>)+<\/tr>){3}<\/table>$/);
  t.match(v.events_html, /<th>level<\/th>/);
  t.match(v.events_html, /<td>disk &quot;sda&quot; full<\/td>/, 'HTML-escaped');
  t.equal(v.field, 'disk \\"sda\\" full', '{field:msg} is JSON-escaped');
  t.equal(v.field_raw, 'disk "sda" full', '{field_raw:msg} is not');
  t.equal(v.field_spaces, 'spaced', 'a quoted field name with spaces');
  t.equal(v.field_missing, '', 'a field the first row lacks is empty');
  t.equal(v.unknown, '{not_a_variable}', 'unknown placeholders stay');

  const [dflt] = await rx.waitFor('/fire/second', 1);
  t.ok(dflt!.at >= req!.at, 'the second action ran after the first');
  t.equal(dflt!.headers['content-type'], 'application/json');
  const body = JSON.parse(dflt!.body);
  t.match(body, { repository: 'fire', alert: { id: alert.id, name: 'errors', query: { queryString: 'level=ERROR', start: '1h', end: 'now' }, notifierID: second }, numberOfEvents: 3 });
  t.equal(body.events.length, 3);

  const after = await getAlert(url, admin, 'fire', alert.id);
  t.type(after.timeOfLastTrigger, 'number');
  t.ok(Math.abs(after.timeOfLastTrigger - req!.at) < 10_000);
  t.equal(after.lastError, null);

  // More matching events inside the throttle time: nothing more is sent.
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'again', n: '6' })]);
  await sleep(12 * INTERVAL_MS);
  t.equal(rx.to('/fire/first').length, 1, 'throttled: still one call');
  t.equal(rx.to('/fire/second').length, 1);
  t.equal((await getAlert(url, admin, 'fire', alert.id)).timeOfLastTrigger, after.timeOfLastTrigger, 'no new trigger recorded');
});

t.test('throttling by time, by counts: a throttled alert fires once per throttle time, an unthrottled one every evaluation', async (t) => {
  const repo = await createRepo(url, admin, 'steady');
  const slow = await createWebhook(url, admin, 'steady', 'slow', `${rx.url}/steady/throttled`);
  const fast = await createWebhook(url, admin, 'steady', 'fast', `${rx.url}/steady/every`);
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'x' })]);
  const a = await createAlert(url, admin, 'steady', { name: 'throttled', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 1500, notifiers: [slow] });
  const b = await createAlert(url, admin, 'steady', { name: 'unthrottled', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 0, notifiers: [fast] });
  await rx.waitFor('/steady/throttled', 1);
  // Until the throttled alert has fired three times (about 3 s; more on a busy machine, whose
  // evaluations come late), and the unthrottled one five times more than that. How often the
  // throttled one may fire is proved by the gaps below, whatever the time taken.
  const deadline = Date.now() + 30_000;
  while ((rx.to('/steady/throttled').length < 3 || rx.to('/steady/every').length < rx.to('/steady/throttled').length + 5) && Date.now() < deadline) await sleep(100);
  // Stop the unthrottled one before counting, so the counts are final.
  for (const x of [a, b]) t.equal((await restAlert(url, admin, 'steady', 'PUT', { ...x, silenced: true, query: x.query }, x.id)).status, 200);
  // An evaluation under way when the alert was silenced may still deliver (late on a busy
  // machine): wait until no call has come for 4 intervals, then count.
  await rx.quiet(['/steady/every', '/steady/throttled'], 4 * INTERVAL_MS);
  const throttled = rx.to('/steady/throttled');
  const every = rx.to('/steady/every');
  t.ok(throttled.length >= 3, `throttled: ${throttled.length} calls with 1.5 s throttle`);
  for (let i = 1; i < throttled.length; i++) {
    const gap = throttled[i]!.at - throttled[i - 1]!.at;
    t.ok(gap >= 1300, `calls ${i - 1} and ${i} are ${gap} ms apart (throttle 1500)`);
  }
  t.ok(every.length >= throttled.length + 5, `unthrottled: ${every.length} calls in the same time`);
  const settled = every.length;
  // Proves that nothing more comes: a fixed wait of 4 evaluation intervals is the point.
  await sleep(4 * INTERVAL_MS);
  t.equal(rx.to('/steady/every').length, settled, 'a silenced alert stops');
});

t.test('throttling by field: each value is held off on its own; rows without the field count as the empty value', async (t) => {
  const repo = await createRepo(url, admin, 'hosts');
  const hook = await createWebhook(url, admin, 'hosts', 'hook', `${rx.url}/hosts`, { bodyTemplate: '{events}' });
  const alert = await createAlert(url, admin, 'hosts', { name: 'per-host', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 3_600_000, throttleField: 'server', notifiers: [hook] });
  const hostsOf = (body: string): string[] => [...new Set((JSON.parse(body) as Record<string, string>[]).map((e) => e.server ?? ''))].sort();

  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', server: 'a' }), event({ level: 'ERROR', server: 'b' }), event({ level: 'INFO', server: 'z' })]);
  const [r1] = await rx.waitFor('/hosts', 1);
  t.strictSame(hostsOf(r1!.body), ['a', 'b'], 'first trigger: values a and b');

  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', server: 'a' }), event({ level: 'ERROR', server: 'b' })]);
  await sleep(10 * INTERVAL_MS);
  t.equal(rx.to('/hosts').length, 1, 'a and b again: held off');

  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', server: 'a' }), event({ level: 'ERROR', server: 'c' })]);
  const [, r2] = await rx.waitFor('/hosts', 2);
  t.strictSame(hostsOf(r2!.body), ['c'], 'a new value c triggers, with only its rows');
  t.equal(JSON.parse(r2!.body).length, 1);

  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'no server field' })]);
  const [, , r3] = await rx.waitFor('/hosts', 3);
  t.strictSame(hostsOf(r3!.body), [''], 'rows without the field: the empty value');
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'no server field either' })]);
  await sleep(10 * INTERVAL_MS);
  t.equal(rx.to('/hosts').length, 3, 'the empty value is held off too');
  const a = await getAlert(url, admin, 'hosts', alert.id);
  t.equal(a.timeOfLastTrigger >= r3!.at - 10_000, true);
});

t.test('silenced alerts and alerts without actions do not run', async (t) => {
  const repo = await createRepo(url, admin, 'quiet');
  const hook = await createWebhook(url, admin, 'quiet', 'hook', `${rx.url}/quiet/silenced`);
  const hook2 = await createWebhook(url, admin, 'quiet', 'hook2', `${rx.url}/quiet/no-actions`);
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR' })]);
  const silenced = await createAlert(url, admin, 'quiet', { name: 'silenced', query: { queryString: 'level=ERROR', start: '1h' }, silenced: true, notifiers: [hook] });
  const bare = await createAlert(url, admin, 'quiet', { name: 'no-actions', query: { queryString: 'level=ERROR', start: '1h' }, notifiers: [] });
  await sleep(12 * INTERVAL_MS);
  t.equal(rx.to('/quiet/silenced').length, 0, 'a silenced alert sends nothing');
  t.equal((await getAlert(url, admin, 'quiet', silenced.id)).timeOfLastTrigger, null, 'and never triggers');
  t.equal((await getAlert(url, admin, 'quiet', bare.id)).timeOfLastTrigger, null, 'an alert without actions never triggers');

  // The same alerts fire once enabled / given an action: the setup above would have fired.
  await restAlert(url, admin, 'quiet', 'PUT', { ...silenced, silenced: false }, silenced.id);
  await rx.waitFor('/quiet/silenced', 1);
  await restAlert(url, admin, 'quiet', 'PUT', { ...bare, notifiers: [hook2] }, bare.id);
  await rx.waitFor('/quiet/no-actions', 1);
  await waitForAlert(url, admin, 'quiet', bare.id, (a) => a.timeOfLastTrigger !== null);
});

t.test('a failing action is retried with backoff and its error becomes visible; a flaky one succeeds on a retry; a trigger no action reached does not hold the alert off', async (t) => {
  const repo = await createRepo(url, admin, 'flaky');
  // Three triggers' worth of 503s (3 attempts each), then 200.
  rx.answer('/flaky/fail', ...Array.from({ length: 9 }, () => ({ status: 503, body: 'down for maintenance' })));
  rx.answer('/flaky/once', { status: 500, body: 'oops' });
  rx.answer('/flaky/missing', ...Array.from({ length: 6 }, () => ({ status: 404, body: 'no such hook' })));
  const fail = await createWebhook(url, admin, 'flaky', 'always-503', `${rx.url}/flaky/fail`);
  const once = await createWebhook(url, admin, 'flaky', 'fails-once', `${rx.url}/flaky/once`);
  const missing = await createWebhook(url, admin, 'flaky', 'gives-404', `${rx.url}/flaky/missing`);
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR' })]);
  const q = { queryString: 'level=ERROR', start: '1h' };
  const failing = await createAlert(url, admin, 'flaky', { name: 'failing', query: q, throttleTimeMillis: 3_600_000, notifiers: [fail] });
  const recovering = await createAlert(url, admin, 'flaky', { name: 'recovering', query: q, throttleTimeMillis: 3_600_000, notifiers: [once] });
  const permanent = await createAlert(url, admin, 'flaky', { name: 'permanent', query: q, throttleTimeMillis: 3_600_000, notifiers: [missing] });

  const p = await waitForAlert(url, admin, 'flaky', permanent.id, (x) => x.lastError !== null);
  t.match(p.lastError, /failed after 1 attempt: .* answered HTTP 404: no such hook/, '404 is not retried');

  const attempts = await rx.waitFor('/flaky/fail', 3);
  const a = await waitForAlert(url, admin, 'flaky', failing.id, (x) => x.lastError !== null);
  t.match(a.lastError, /^action "always-503" \(webhook\) failed after 3 attempts: 127\.0\.0\.1:\d+ answered HTTP 503: down for maintenance; no action succeeded, so the alert is not held off and tries again at the next evaluation$/);
  t.type(a.lastErrorTime, 'number');
  t.ok(attempts[1]!.at - attempts[0]!.at >= 140, `first retry after ${attempts[1]!.at - attempts[0]!.at} ms (backoff 150)`);
  t.ok(attempts[2]!.at - attempts[1]!.at >= 290, `second retry after ${attempts[2]!.at - attempts[1]!.at} ms (backoff doubled)`);
  const viaGql = await mustGql(url, admin, 'query($id: String!) { searchDomain(name: "flaky") { alert(id: $id) { lastError timeOfLastTrigger } } }', { id: failing.id });
  t.equal(viaGql.searchDomain.alert.lastError, a.lastError, 'GraphQL shows the same error');

  await rx.waitFor('/flaky/once', 2);
  const r = await waitForAlert(url, admin, 'flaky', recovering.id, (x) => x.timeOfLastTrigger !== null);
  await sleep(4 * INTERVAL_MS);
  t.equal((await getAlert(url, admin, 'flaky', recovering.id)).lastError, null, 'succeeded on the retry: no error');
  t.type(r.timeOfLastTrigger, 'number');

  // Every failed trigger is taken back (the product: "if all actions fail, they will be retried"):
  // the next evaluation triggers again, until a delivery succeeds; then the throttle holds.
  const fails = await rx.waitFor('/flaky/fail', 10);
  t.ok(fails[3]!.at - fails[2]!.at >= 0, 'a second trigger followed the three failed attempts');
  await rx.waitFor('/flaky/missing', 7);
  const healed = await waitForAlert(url, admin, 'flaky', failing.id, (x) => x.lastError === null);
  t.type(healed.timeOfLastTrigger, 'number', 'the successful trigger is the one recorded');
  await waitForAlert(url, admin, 'flaky', permanent.id, (x) => x.lastError === null);
  await sleep(8 * INTERVAL_MS);
  t.equal(rx.to('/flaky/fail').length, 10, 'three triggers of three attempts failed, the fourth was delivered, then held off');
  t.equal(rx.to('/flaky/once').length, 2);
  t.equal(rx.to('/flaky/missing').length, 7, 'six single failed attempts (no retries on 404), then delivered, then held off');

  // An update clears the error; the next trigger reports afresh.
  const updated = await restAlert(url, admin, 'flaky', 'PUT', { ...failing, throttleTimeMillis: 3_600_000, notifiers: [once] }, failing.id);
  t.equal(updated.json().lastError, null, 'an updated alert starts without the old error');
});

t.test('outbound safety: internal addresses are refused, redirects are not followed', async (t) => {
  const repo = await createRepo(url, admin, 'safety');
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR' })]);
  const q = { queryString: 'level=ERROR', start: '1h' };
  const priv = await createWebhook(url, admin, 'safety', 'private', `${internal.url}/private`);
  const meta = await createWebhook(url, admin, 'safety', 'metadata', 'http://169.254.169.254/latest/meta-data/');
  rx.answer('/redirect', ...Array.from({ length: 1000 }, () => ({ status: 302, headers: { location: `${internal.url}/private` } })));
  const redirect = await createWebhook(url, admin, 'safety', 'redirect', `${rx.url}/redirect`);
  const p = await createAlert(url, admin, 'safety', { name: 'to-private', query: q, notifiers: [priv] });
  const m = await createAlert(url, admin, 'safety', { name: 'to-metadata', query: q, notifiers: [meta] });
  const r = await createAlert(url, admin, 'safety', { name: 'via-redirect', query: q, notifiers: [redirect] });

  const pa = await waitForAlert(url, admin, 'safety', p.id, (x) => x.lastError !== null);
  t.match(pa.lastError, /failed after 1 attempt: refused to connect to "127\.0\.0\.2" \(127\.0\.0\.2\): loopback, private and link-local addresses are not allowed unless listed in alerts\.allow_targets/);
  const ma = await waitForAlert(url, admin, 'safety', m.id, (x) => x.lastError !== null);
  t.match(ma.lastError, /refused to connect to "169\.254\.169\.254"/);
  const ra = await waitForAlert(url, admin, 'safety', r.id, (x) => x.lastError !== null);
  t.match(ra.lastError, /failed after 1 attempt: 127\.0\.0\.1:\d+ answered 302 redirecting to http:\/\/127\.0\.0\.2:\d+\/private; redirects are not followed/);
  await sleep(4 * INTERVAL_MS);
  t.equal(internal.requests.length, 0, 'nothing ever reached the address that is not allowed');
  const redirects = rx.to('/redirect').length;
  t.ok(redirects >= 1, `the redirecting server was called (${redirects} triggers, one attempt each: no action reached, so none holds the alert off)`);
  // Stop them: they would try again at every evaluation.
  for (const x of [p, m, r]) t.equal((await restAlert(url, admin, 'safety', 'PUT', { ...x, silenced: true }, x.id)).status, 200);
});

t.test('repository action: the results are ingested with @trigger.* fields and are searchable', async (t) => {
  const src = await createRepo(url, admin, 'src');
  const sink = await createRepo(url, admin, 'sink');
  const act = await mustGql(url, admin, 'mutation($t: String!) { createHumioRepoAction(input: {viewName: "src", name: "to-sink", ingestToken: $t}) { id } }', { t: sink.ingestToken });
  const alert = await createAlert(url, admin, 'src', { name: 'copy-errors', description: 'copies errors', query: { queryString: 'level=ERROR', start: '1h' }, notifiers: [act.createHumioRepoAction.id] });
  await ingestStructured(url, src.ingestToken, [event({ level: 'ERROR', code: 'E1' }), event({ level: 'ERROR', code: 'E2' }), event({ level: 'INFO', code: 'I1' })]);

  t.equal(await waitForCount(url, 'sink', admin, 2, 20_000, '@trigger.name="copy-errors"'), 2, 'both result events arrived in the sink');
  const rows = await queryJson(url, 'sink', { queryString: '@trigger.name="copy-errors"' }, { token: admin });
  t.equal(rows.length, 2);
  t.strictSame(rows.map((e) => e.code).sort(), ['E1', 'E2']);
  const uuid = rows[0]!['@trigger.invocation.uuid'];
  t.match(uuid, UUID);
  for (const e of rows) {
    t.match(e, {
      '@trigger.id': alert.id,
      '@trigger.name': 'copy-errors',
      '@trigger.description': 'copies errors',
      '@trigger.type': 'alert',
      '@trigger.query.start': '1h',
      '@trigger.query.end': 'now',
      '@trigger.repository.name': 'src',
      '@trigger.invocation.uuid': uuid,
      level: 'ERROR',
      '@tag.host': 'web-1',
      '#type': 'json-for-action',
      '#repo': 'sink',
    });
    t.equal(Number(e['@trigger.invocation.end']) - Number(e['@trigger.invocation.start']), 3_600_000);
    t.equal(e['@trigger.invocation.triggeredAt'], new Date(Date.parse(e['@trigger.invocation.triggeredAt'])).toISOString());
    const raw = JSON.parse(e['@rawstring']);
    t.equal(raw['@tag.host'], 'web-1', '@rawstring is the original event as JSON, tags renamed');
    t.equal(raw.code, e.code);
    t.equal(raw['#host'], undefined);
  }
  t.equal(await waitForCount(url, 'sink', admin, 2, 5000, `"@trigger.invocation.uuid"="${uuid}"`), 2, 'searchable by the invocation id');
});

t.test('email action: the mail reaches the SMTP server with rendered subject and body', async (t) => {
  const repo = await createRepo(url, admin, 'mail');
  const act = await mustGql(
    url,
    admin,
    'mutation { createEmailAction(input: {viewName: "mail", name: "ops-mail", recipients: ["ops@example.com", "oncall@example.com"], subjectTemplate: "Alert {alert_name}: {event_count} events", bodyTemplate: "Events in {repo_name}:\\n{events_str}\\nend", useProxy: false}) { id recipients subjectTemplate bodyTemplate } }',
  );
  t.strictSame(act.createEmailAction.recipients, ['ops@example.com', 'oncall@example.com']);
  await createAlert(url, admin, 'mail', { name: 'mailed', query: { queryString: 'level=ERROR', start: '1h' }, notifiers: [act.createEmailAction.id] });
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'one' }), event({ level: 'ERROR', msg: 'two' })]);
  const [mail] = await smtp.waitFor(1);
  t.equal(mail!.from, 'alerts@logsvc.test');
  t.strictSame(mail!.to.sort(), ['oncall@example.com', 'ops@example.com']);
  t.equal(mail!.subject, 'Alert mailed: 2 events');
  t.match(mail!.body, /Events in mail:\n/);
  t.match(mail!.body, /level=ERROR msg=one/);
  t.match(mail!.body, /level=ERROR msg=two/);
  t.match(mail!.body, /\nend/);
});

t.test('Slack, PagerDuty, OpsGenie and VictorOps actions post their payloads', async (t) => {
  const repo = await createRepo(url, admin, 'ops');
  const ids: string[] = [];
  ids.push((await mustGql(url, admin, `mutation { createSlackAction(input: {viewName: "ops", name: "slack", url: "${rx.url}/slack", fields: [{fieldName: "Query", value: "{query_string}"}, {fieldName: "Count", value: "{event_count}"}], useProxy: false}) { id } }`)).createSlackAction.id);
  ids.push((await mustGql(url, admin, 'mutation { createPagerDutyAction(input: {viewName: "ops", name: "pd", severity: "error", routingKey: "rk-1", useProxy: false}) { id } }')).createPagerDutyAction.id);
  ids.push((await mustGql(url, admin, `mutation { createOpsGenieAction(input: {viewName: "ops", name: "og", apiUrl: "${rx.url}/og", genieKey: "gk-1", useProxy: false}) { id } }`)).createOpsGenieAction.id);
  ids.push((await mustGql(url, admin, `mutation { createVictorOpsAction(input: {viewName: "ops", name: "vo", messageType: "critical", notifyUrl: "${rx.url}/vo", useProxy: false}) { id } }`)).createVictorOpsAction.id);
  const alert = await createAlert(url, admin, 'ops', { name: 'incident', description: 'it broke', query: { queryString: 'level=ERROR', start: '1h' }, notifiers: ids });
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'boom' })]);

  const [slack] = await rx.waitFor('/slack', 1);
  const s = JSON.parse(slack!.body);
  t.strictSame(s.attachments[0].fields, [
    { title: 'Query', value: 'level=ERROR', short: false },
    { title: 'Count', value: '1', short: false },
  ]);
  t.match(s.text, /incident/);

  const [pd] = await rx.waitFor('/pagerduty', 1);
  const p = JSON.parse(pd!.body);
  t.match(p, { routing_key: 'rk-1', event_action: 'trigger', payload: { severity: 'error', source: 'logsvc', group: 'ops', summary: 'incident: 1 events in ops', custom_details: { query: 'level=ERROR', event_count: '1' } } });
  t.equal(p.payload.custom_details.events.length, 1);

  const [og] = await rx.waitFor('/og/v2/alerts', 1);
  t.equal(og!.headers.authorization, 'GenieKey gk-1');
  t.match(JSON.parse(og!.body), { message: 'incident', alias: `logsvc-${alert.id}`, source: 'logsvc', details: { repository: 'ops' } });
  t.match(JSON.parse(og!.body).description, /it broke\n\nlevel=ERROR msg=boom/);

  const [vo] = await rx.waitFor('/vo', 1);
  t.match(JSON.parse(vo!.body), { message_type: 'CRITICAL', entity_id: `logsvc-${alert.id}`, entity_display_name: 'incident', monitoring_tool: 'logsvc' });

  t.ok(slack!.at <= pd!.at && pd!.at <= og!.at && og!.at <= vo!.at, 'actions ran in the order the alert lists them');
  t.equal((await getAlert(url, admin, 'ops', alert.id)).lastError, null);
});

t.test('a query that fails makes its error visible', async (t) => {
  await createRepo(url, admin, 'broken');
  const hook = await createWebhook(url, admin, 'broken', 'hook', `${rx.url}/broken`);
  const a = await createAlert(url, admin, 'broken', { name: 'owner-gone', query: { queryString: 'x', start: '1h' }, notifiers: [hook] });
  // The owner check: an alert owned by a user who is not a member does not run.
  const u = await mustGql(url, admin, 'mutation { addUser(input: {username: "leaver"}) { user { id } } }');
  const upd = await restAlert(url, admin, 'broken', 'PUT', { ...a, runAsUserId: u.addUser.user.id, queryOwnershipType: 'User' }, a.id);
  t.equal(upd.status, 200, upd.text);
  const got = await waitForAlert(url, admin, 'broken', a.id, (x) => x.lastError !== null);
  t.match(got.lastError, /not run: the alert's owner "leaver" is no longer a member of repository "broken"/);
  t.equal(rx.to('/broken').length, 0);
  const g = await gql(url, admin, '{ searchDomain(name: "broken") { alerts { lastError } } }');
  t.match(g.data.searchDomain.alerts[0].lastError, /no longer a member/);
});
