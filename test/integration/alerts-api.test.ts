/**
 * The alert and action APIs of a real node (http-interface.md "Alerts", api-facts §5.2-5.3): REST
 * list/get/create/update/delete with both path spellings and a trailing slash, alerts addressed by
 * id or name, validation that names the field, access (members, non-members, ingest tokens), the
 * GraphQL mutations and searchDomain listings on the same store, action types and their
 * validation. The scheduler is switched off here: this file is about definitions.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser, gql } from '../helpers/http.js';
import { addMember, createRepo, mustGql } from '../helpers/query.js';
import { alertsPath, createAlert, createWebhook, getAlert, restAlert } from '../helpers/alerts.js';

t.setTimeout(120_000);

const node = await startNode(t, { config: ['[digest]', 'partitions = 2', 'worker_threads = 1', '[alerts]', 'enabled = false', ''].join('\n') });
const { url, adminToken: admin } = node;
const web = await createRepo(url, admin, 'web');
await createRepo(url, admin, 'other');
const member = await createUser(url, admin, 'member');
const outsider = await createUser(url, admin, 'outsider');
await addMember(url, admin, 'web', 'member');

const hookA = await createWebhook(url, member.token, 'web', 'hook-a', 'https://hooks.example.com/a');
const hookB = await createWebhook(url, member.token, 'web', 'hook-b', 'https://hooks.example.com/b');

const base = { name: 'errors', query: { queryString: 'level=ERROR | count() | _count > 5', start: '10m' }, throttleTimeMillis: 600_000, silenced: false, notifiers: [hookA], description: 'too many errors', labels: ['prod'] };

t.test('REST: create (trailing slash), get by id and by name, list, update, delete (204)', async (t) => {
  const created = await api(url, `${alertsPath('web')}/`, { token: member.token, body: JSON.stringify({ ...base, id: '', query: { ...base.query, end: '', isLive: false } }) });
  t.equal(created.status, 200, created.text);
  const a = created.json();
  t.match(a, { name: 'errors', description: 'too many errors', query: { queryString: base.query.queryString, start: '10m', end: 'now' }, throttleTimeMillis: 600_000, throttleField: null, silenced: false, notifiers: [hookA], labels: ['prod'], timeOfLastTrigger: null, lastError: null });
  t.match(a.id, /^[A-Za-z0-9_-]{10,}$/, 'the stored alert has an id');
  t.equal(a.queryOwnershipType, 'User');
  t.equal(a.runAsUserId, member.id, 'owned by the user who created it');

  t.strictSame(await getAlert(url, member.token, 'web', a.id), a, 'get by id');
  t.strictSame(await getAlert(url, member.token, 'web', 'errors'), a, 'get by name');
  const dataspaces = await api(url, `/api/v1/dataspaces/web/alerts/${a.id}`, { token: member.token });
  t.equal(dataspaces.status, 200);
  t.strictSame(dataspaces.json(), a, 'the /dataspaces/ spelling reaches the same alert');

  const list = await restAlert(url, member.token, 'web', 'GET');
  t.equal(list.status, 200);
  t.strictSame(list.json(), [a]);

  const put = await restAlert(url, member.token, 'web', 'PUT', { ...base, name: 'errors-renamed', silenced: true, notifiers: [hookB, hookA], throttleField: 'host', labels: [] }, a.id);
  t.equal(put.status, 200, put.text);
  t.match(put.json(), { id: a.id, name: 'errors-renamed', silenced: true, notifiers: [hookB, hookA], throttleField: 'host', labels: [] });
  t.equal((await getAlert(url, member.token, 'web', a.id)).name, 'errors-renamed', 'the update is stored');

  const del = await restAlert(url, member.token, 'web', 'DELETE', undefined, 'errors-renamed');
  t.equal(del.status, 204, 'deleted by name (what humioctl sends)');
  t.equal(del.text, '');
  const gone = await restAlert(url, member.token, 'web', 'GET', undefined, a.id);
  t.equal(gone.status, 404);
  t.match(gone.text, /alert ".*" does not exist in repository "web"/);
  t.strictSame((await restAlert(url, member.token, 'web', 'GET')).json(), []);
});

t.test('REST: defaults', async (t) => {
  const a = await createAlert(url, member.token, 'web', { name: 'minimal', query: { queryString: 'x', start: '15m' }, notifiers: [] });
  t.equal(a.throttleTimeMillis, 15 * 60_000, 'no throttleTimeMillis: the query window');
  t.equal(a.silenced, false);
  t.strictSame(a.labels, []);
  t.equal(a.description, '');
  const noNotifiers = await restAlert(url, member.token, 'web', 'POST', { name: 'no-notifiers-field', query: { queryString: 'x', start: '1h' } });
  t.equal(noNotifiers.status, 200, 'notifiers may be left out');
  t.strictSame(noNotifiers.json().notifiers, []);
  for (const id of [a.id, noNotifiers.json().id]) t.equal((await restAlert(url, member.token, 'web', 'DELETE', undefined, id)).status, 204);
});

t.test('REST: validation answers 400 naming the field', async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', [1, 2], /JSON object/],
    ['no name', { ...base, name: undefined }, /^name: required/],
    ['empty name', { ...base, name: '  ' }, /^name: required/],
    ['name too long', { ...base, name: 'x'.repeat(201) }, /^name: longer than 200/],
    ['no query', { ...base, query: undefined }, /^query: required/],
    ['query not an object', { ...base, query: 'level=ERROR' }, /^query: required, an object/],
    ['no queryString', { ...base, query: { start: '1h' } }, /^query\.queryString: required/],
    ['query does not parse', { ...base, query: { queryString: 'level=ERROR | count(', start: '1h' } }, /^query\.queryString: /],
    ['unknown function', { ...base, query: { queryString: 'nosuchfunction()', start: '1h' } }, /^query\.queryString: .*nosuchfunction/],
    ['no start', { ...base, query: { queryString: 'x' } }, /^query\.start: required/],
    ['absolute start', { ...base, query: { queryString: 'x', start: 1_700_000_000_000 } }, /^query\.start: required, a relative time/],
    ['start not relative', { ...base, query: { queryString: 'x', start: 'yesterday' } }, /^query\.start: "yesterday" is not a relative time/],
    ['zero window', { ...base, query: { queryString: 'x', start: '0s' } }, /^query\.start: must be more than 0/],
    ['end not now', { ...base, query: { queryString: 'x', start: '1h', end: '5m' } }, /^query\.end: /],
    ['negative throttle', { ...base, throttleTimeMillis: -1 }, /^throttleTimeMillis: must be a non-negative integer/],
    ['fractional throttle', { ...base, throttleTimeMillis: 1.5 }, /^throttleTimeMillis: must be a non-negative integer/],
    ['string throttle', { ...base, throttleTimeMillis: '60000' }, /^throttleTimeMillis: must be a non-negative integer/],
    ['silenced not boolean', { ...base, silenced: 'yes' }, /^silenced: must be true or false/],
    ['notifiers not a list', { ...base, notifiers: hookA }, /^notifiers: must be a list/],
    ['unknown notifier', { ...base, notifiers: [hookA, 'no-such-action'] }, /^notifiers\[1\]: action "no-such-action" does not exist in repository "web"/],
    ['labels not strings', { ...base, labels: [1] }, /^labels\[0\]: must be a string/],
    ['throttleField not a string', { ...base, throttleField: 5 }, /^throttleField: must be a string/],
  ];
  for (const [what, body, message] of cases) {
    const res = await restAlert(url, member.token, 'web', 'POST', body);
    t.equal(res.status, 400, `${what}: 400`);
    t.match(res.text, message, `${what}: ${res.text.trim()}`);
  }
  const malformed = await api(url, alertsPath('web'), { token: member.token, body: '{"name":' });
  t.equal(malformed.status, 400, 'malformed JSON');
  t.strictSame((await restAlert(url, member.token, 'web', 'GET')).json(), [], 'nothing was stored');
});

t.test('REST: an action of another repository is not a notifier here; names resolve within the repository', async (t) => {
  const foreign = await createWebhook(url, admin, 'other', 'foreign', 'https://hooks.example.com/x');
  const res = await restAlert(url, member.token, 'web', 'POST', { ...base, notifiers: [foreign] });
  t.equal(res.status, 400);
  t.match(res.text, /notifiers\[0\]: action ".*" does not exist in repository "web"/);
  const byName = await createAlert(url, member.token, 'web', { ...base, name: 'by-action-name', notifiers: ['hook-b'] });
  t.strictSame(byName.notifiers, [hookB], 'an action name resolves to its id');
  await restAlert(url, member.token, 'web', 'DELETE', undefined, byName.id);
});

t.test('REST: duplicate names, unknown alerts, access', async (t) => {
  const a = await createAlert(url, member.token, 'web', { ...base, name: 'dup' });
  const dup = await restAlert(url, member.token, 'web', 'POST', { ...base, name: 'dup' });
  t.equal(dup.status, 409);
  t.match(dup.text, /an alert named "dup" already exists/);
  const b = await createAlert(url, member.token, 'web', { ...base, name: 'dup2' });
  const clash = await restAlert(url, member.token, 'web', 'PUT', { ...base, name: 'dup' }, b.id);
  t.equal(clash.status, 409, 'renaming onto another alert\'s name');

  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    const res = await restAlert(url, member.token, 'web', method, method === 'PUT' ? base : undefined, 'no-such-alert');
    t.equal(res.status, 404, `${method} of an unknown alert: 404`);
  }
  t.equal((await restAlert(url, member.token, 'other', 'GET', undefined, a.id)).status, 404, "another repository's path does not reach it");
  t.equal((await restAlert(url, outsider.token, 'web', 'GET')).status, 404, 'a non-member sees no repository');
  t.equal((await restAlert(url, outsider.token, 'web', 'GET', undefined, a.id)).status, 404);
  t.equal((await restAlert(url, outsider.token, 'web', 'DELETE', undefined, a.id)).status, 404);
  t.equal((await api(url, alertsPath('web'))).status, 401, 'no credentials');
  t.equal((await restAlert(url, web.ingestToken, 'web', 'GET')).status, 403, 'an ingest token cannot manage alerts');
  t.equal((await restAlert(url, admin, 'web', 'GET')).json().length, 2, 'root sees them');
  for (const id of [a.id, b.id]) await restAlert(url, member.token, 'web', 'DELETE', undefined, id);
});

t.test('REST: ownership', async (t) => {
  const org = await restAlert(url, member.token, 'web', 'POST', { ...base, name: 'org', queryOwnershipType: 'Organization' });
  t.equal(org.status, 403, 'only root makes organization-owned alerts');
  const other = await restAlert(url, member.token, 'web', 'POST', { ...base, name: 'as-other', runAsUserId: outsider.id });
  t.equal(other.status, 403, 'running as another user needs root');
  const byAdmin = await createAlert(url, admin, 'web', { ...base, name: 'by-local-admin' });
  t.equal(byAdmin.queryOwnershipType, 'Organization', 'the local admin token has no user: the organization owns it');
  t.equal(byAdmin.runAsUserId, null);
  await restAlert(url, admin, 'web', 'DELETE', undefined, byAdmin.id);
});

const ALERT_FIELDS = 'id name displayName description queryString queryStart throttleTimeMillis throttleField timeOfLastTrigger enabled actions labels lastError lastWarnings isStarred queryOwnership { __typename id } runAsUser { username } actionsV2 { __typename id name }';

t.test('GraphQL: createAlert, searchDomain alerts, updateAlert, deleteAlert by name; same store as REST', async (t) => {
  const created = await mustGql(
    url,
    member.token,
    `mutation($v: String!, $a: [String!]!) { createAlert(input: {viewName: $v, name: "gql-alert", description: "d", queryString: "level=ERROR", queryStart: "1h", throttleTimeMillis: 60000, throttleField: "host", enabled: true, actions: $a, labels: ["x"], queryOwnershipType: User}) { ${ALERT_FIELDS} } }`,
    { v: 'web', a: [hookA, 'hook-b'] },
  );
  const a = created.createAlert;
  t.match(a, {
    name: 'gql-alert',
    displayName: 'gql-alert',
    description: 'd',
    queryString: 'level=ERROR',
    queryStart: '1h',
    throttleTimeMillis: 60000,
    throttleField: 'host',
    timeOfLastTrigger: null,
    enabled: true,
    actions: [hookA, hookB],
    labels: ['x'],
    lastError: null,
    lastWarnings: [],
    isStarred: false,
    queryOwnership: { __typename: 'UserOwnership', id: member.id },
    runAsUser: { username: 'member' },
  });
  t.strictSame(a.actionsV2.map((x: { name: string }) => x.name).sort(), ['hook-a', 'hook-b']);
  t.equal(a.actionsV2[0].__typename, 'WebhookAction');

  const rest = await getAlert(url, member.token, 'web', a.id);
  t.match(rest, { name: 'gql-alert', query: { queryString: 'level=ERROR', start: '1h' }, silenced: false, throttleField: 'host', notifiers: [hookA, hookB] }, 'REST sees the GraphQL alert');

  const listed = await mustGql(url, member.token, `query($v: String!) { searchDomain(name: $v) { __typename alerts { ${ALERT_FIELDS} } } }`, { v: 'web' });
  t.equal(listed.searchDomain.__typename, 'Repository');
  t.strictSame(listed.searchDomain.alerts.map((x: { id: string }) => x.id), [a.id]);
  const one = await mustGql(url, member.token, 'query($v: String!, $id: String!) { repository(name: $v) { alert(id: $id) { id name } } }', { v: 'web', id: 'gql-alert' });
  t.equal(one.repository.alert.id, a.id, 'alert(id:) accepts the name too');

  const updated = await mustGql(
    url,
    member.token,
    `mutation($v: String!, $id: String!) { updateAlert(input: {viewName: $v, id: $id, name: "gql-alert-2", queryString: "level=WARN", queryStart: "30m", throttleTimeMillis: 0, enabled: false, actions: [], labels: []}) { ${ALERT_FIELDS} } }`,
    { v: 'web', id: a.id },
  );
  t.match(updated.updateAlert, { id: a.id, name: 'gql-alert-2', queryString: 'level=WARN', queryStart: '30m', throttleTimeMillis: 0, throttleField: null, enabled: false, actions: [] });
  t.equal((await getAlert(url, member.token, 'web', a.id)).silenced, true, 'enabled: false is silenced: true');

  const bad = await gql(url, member.token, 'mutation { createAlert(input: {viewName: "web", name: "bad", queryString: "x", queryStart: "soon", throttleTimeMillis: 1, actions: []}) { id } }');
  t.equal(bad.status, 200);
  t.match(bad.errors?.[0]?.message, /^queryStart: "soon" is not a relative time/, 'GraphQL errors name the GraphQL field');
  t.equal(bad.errors?.[0]?.extensions?.code, 'E_VALIDATION');

  const deleted = await mustGql(url, member.token, 'mutation { deleteAlert(input: {viewName: "web", id: "gql-alert-2"}) }');
  t.equal(deleted.deleteAlert, true, 'deleteAlert takes the name in id, as humioctl sends it');
  t.equal((await restAlert(url, member.token, 'web', 'GET', undefined, a.id)).status, 404);
  const again = await gql(url, member.token, 'mutation { deleteAlert(input: {viewName: "web", id: "gql-alert-2"}) }');
  t.match(again.errors?.[0]?.message, /does not exist/);
});

t.test('actions: every type created, listed with its fields, read by id, deleted; validation', async (t) => {
  const repoAction = await mustGql(url, member.token, 'mutation($t: String!) { createHumioRepoAction(input: {viewName: "web", name: "to-other", ingestToken: $t}) { __typename id name ingestToken } }', {
    t: web.ingestToken,
  });
  t.match(repoAction.createHumioRepoAction, { __typename: 'HumioRepoAction', name: 'to-other', ingestToken: web.ingestToken });
  await mustGql(url, member.token, 'mutation { createSlackAction(input: {viewName: "web", name: "slack", url: "https://hooks.slack.com/services/T/B/x", fields: [{fieldName: "Query", value: "{query_string}"}], useProxy: false}) { id } }');
  await mustGql(url, member.token, 'mutation { createPagerDutyAction(input: {viewName: "web", name: "pd", severity: "Critical", routingKey: "rk-123", useProxy: false}) { id } }');
  await mustGql(url, member.token, 'mutation { createOpsGenieAction(input: {viewName: "web", name: "og", apiUrl: "https://api.eu.opsgenie.com", genieKey: "gk-1", useProxy: false}) { id } }');
  await mustGql(url, member.token, 'mutation { createVictorOpsAction(input: {viewName: "web", name: "vo", messageType: "warning", notifyUrl: "https://alert.victorops.com/integrations/generic/x/alert/key/route", useProxy: false}) { id } }');

  const all = await mustGql(
    url,
    member.token,
    `{ searchDomain(name: "web") { actions {
        __typename id name displayName
        ... on WebhookAction { url method headers { header value } bodyTemplate ignoreSSL useProxy }
        ... on SlackAction { url fields { fieldName value } useProxy }
        ... on HumioRepoAction { ingestToken }
        ... on PagerDutyAction { severity routingKey useProxy }
        ... on OpsGenieAction { apiUrl genieKey useProxy }
        ... on VictorOpsAction { messageType notifyUrl useProxy }
      } } }`,
  );
  const byName = new Map(all.searchDomain.actions.map((x: Record<string, unknown>) => [x.name, x]));
  t.strictSame([...byName.keys()].sort(), ['hook-a', 'hook-b', 'og', 'pd', 'slack', 'to-other', 'vo']);
  t.match(byName.get('hook-a'), { __typename: 'WebhookAction', url: 'https://hooks.example.com/a', method: 'POST', headers: [], bodyTemplate: '', ignoreSSL: false });
  t.match(byName.get('slack'), { __typename: 'SlackAction', fields: [{ fieldName: 'Query', value: '{query_string}' }] });
  t.match(byName.get('pd'), { __typename: 'PagerDutyAction', severity: 'critical', routingKey: 'rk-123' });
  t.match(byName.get('og'), { __typename: 'OpsGenieAction', apiUrl: 'https://api.eu.opsgenie.com', genieKey: 'gk-1' });
  t.match(byName.get('vo'), { __typename: 'VictorOpsAction', messageType: 'WARNING' });

  const one = await mustGql(url, member.token, 'query($id: String!) { searchDomain(name: "web") { action(id: $id) { id name } } }', { id: hookA });
  t.equal(one.searchDomain.action.name, 'hook-a');
  const some = await mustGql(url, member.token, 'query($ids: [String!]) { searchDomain(name: "web") { actions(actionIds: $ids) { id } } }', { ids: [hookB] });
  t.strictSame(some.searchDomain.actions, [{ id: hookB }]);

  const invalid: [string, RegExp][] = [
    ['createWebhookAction(input: {viewName: "web", name: "w", url: "ftp://x", method: "POST", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^url: must be an http or https URL/],
    ['createWebhookAction(input: {viewName: "web", name: "w", url: "not a url", method: "POST", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^url: "not a url" is not a URL/],
    ['createWebhookAction(input: {viewName: "web", name: "w", url: "https://x", method: "TRACE", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^method: must be one of GET, HEAD, OPTIONS, PATCH, POST, PUT/],
    ['createWebhookAction(input: {viewName: "web", name: "w", url: "https://x", method: "POST", headers: [{header: "Host", value: "y"}], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^headers\[0\]\.header: "Host" is set by the HTTP client/],
    ['createWebhookAction(input: {viewName: "web", name: "w", url: "https://x", method: "POST", headers: [{header: "bad header", value: "y"}], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^headers\[0\]\.header: .* is not a valid header name/],
    ['createWebhookAction(input: {viewName: "web", name: "hook-a", url: "https://x", method: "POST", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /an action named "hook-a" already exists/],
    ['createWebhookAction(input: {viewName: "web", name: "", url: "https://x", method: "POST", headers: [], bodyTemplate: "", ignoreSSL: false, useProxy: false}) { id }', /^name: required/],
    ['createHumioRepoAction(input: {viewName: "web", name: "r", ingestToken: "not-a-token"}) { id }', /^ingestToken: not a valid ingest token/],
    ['createPagerDutyAction(input: {viewName: "web", name: "p", severity: "urgent", routingKey: "k", useProxy: false}) { id }', /^severity: must be one of critical, error, warning, info/],
    ['createVictorOpsAction(input: {viewName: "web", name: "v", messageType: "LOUD", notifyUrl: "https://x", useProxy: false}) { id }', /^messageType: must be one of CRITICAL/],
    ['createEmailAction(input: {viewName: "web", name: "e", recipients: ["ops@example.com"], useProxy: false}) { id }', /email actions need an SMTP server: set alerts\.smtp_host/],
    ['createEmailAction(input: {viewName: "web", name: "e", recipients: ["not an address"], useProxy: false}) { id }', /^recipients\[0\]: .* is not an email address/],
    ['createSlackAction(input: {viewName: "nope", name: "s", url: "https://x", fields: [], useProxy: false}) { id }', /repository "nope" does not exist/],
  ];
  for (const [mutation, message] of invalid) {
    const r = await gql(url, member.token, `mutation { ${mutation} }`);
    t.match(r.errors?.[0]?.message, message, mutation.slice(0, 60));
  }
  const noSmtp = await gql(url, member.token, 'mutation { createEmailAction(input: {viewName: "web", name: "e", recipients: ["ops@example.com"], useProxy: false}) { id } }');
  t.equal(noSmtp.errors?.[0]?.extensions?.code, 'E_NOT_CONFIGURED');
  const outsiderCreate = await gql(url, outsider.token, 'mutation { createSlackAction(input: {viewName: "web", name: "s2", url: "https://x", fields: [], useProxy: false}) { id } }');
  t.match(outsiderCreate.errors?.[0]?.message, /does not exist or you have no access/, 'a non-member cannot add actions');
});

t.test('deleting an action takes it out of the alerts that used it; deleting the repository takes everything', async (t) => {
  const temp = await createWebhook(url, member.token, 'web', 'temp', 'https://hooks.example.com/temp');
  const a = await createAlert(url, member.token, 'web', { ...base, name: 'uses-temp', notifiers: [hookA, temp] });
  const del = await mustGql(url, member.token, 'mutation($id: String!) { deleteAction(input: {viewName: "web", id: $id}) }', { id: temp });
  t.equal(del.deleteAction, true);
  t.strictSame((await getAlert(url, member.token, 'web', a.id)).notifiers, [hookA]);
  const again = await gql(url, member.token, 'mutation($id: String!) { deleteAction(input: {viewName: "web", id: $id}) }', { id: temp });
  t.match(again.errors?.[0]?.message, /does not exist/);

  const gone = await createRepo(url, admin, 'short-lived');
  const h = await createWebhook(url, admin, 'short-lived', 'h', 'https://hooks.example.com/h');
  await createAlert(url, admin, 'short-lived', { ...base, name: 'x', notifiers: [h] });
  await mustGql(url, admin, 'mutation { deleteSearchDomain(name: "short-lived") { result } }');
  await createRepo(url, admin, 'short-lived');
  t.strictSame((await restAlert(url, admin, 'short-lived', 'GET')).json(), [], 'a new repository of the same name starts empty');
  const actions = await mustGql(url, admin, '{ searchDomain(name: "short-lived") { actions { id } } }');
  t.strictSame(actions.searchDomain.actions, []);
  void gone;
});

/** humioctl's ActionDetails fragment and its ListActions / GetActionByID queries, verbatim (humio/cli actions.graphql). */
const HUMIOCTL_ACTION_DETAILS = `fragment ActionDetails on Action{
    id
    name
    ... on EmailAction { recipients subjectTemplate emailBodyTemplate: bodyTemplate useProxy }
    ... on HumioRepoAction { ingestToken }
    ... on OpsGenieAction { apiUrl genieKey useProxy }
    ... on PagerDutyAction { severity routingKey useProxy }
    ... on SlackAction { url fields { fieldName value } useProxy }
    ... on SlackPostMessageAction { apiToken channels fields { fieldName value } useProxy }
    ... on VictorOpsAction { messageType notifyUrl useProxy }
    ... on UploadFileAction { fileName }
    ... on WebhookAction { method url headers { header value } WebhookBodyTemplate: bodyTemplate ignoreSSL useProxy }
    ... on S3Action { roleArn awsRegion bucketName fileName outputFormat outputMetadata useProxy }
}`;

t.test("humioctl's actions list / actions show queries validate and answer", async (t) => {
  const list = await gql(url, member.token, `query ListActions($SearchDomainName: String!) { searchDomain(name: $SearchDomainName) { actions { ...ActionDetails } } }\n${HUMIOCTL_ACTION_DETAILS}`, { SearchDomainName: 'web' });
  t.equal(list.errors, undefined, JSON.stringify(list.errors));
  const hook = (list.data.searchDomain.actions as Record<string, unknown>[]).find((a) => a.id === hookA);
  t.match(hook, { id: hookA, name: 'hook-a', method: 'POST', url: 'https://hooks.example.com/a', WebhookBodyTemplate: '', ignoreSSL: false, useProxy: false });
  const show = await gql(url, member.token, `query GetActionByID($SearchDomainName: String!, $ActionID: String!) { searchDomain(name: $SearchDomainName) { action(id: $ActionID) { ...ActionDetails } } }\n${HUMIOCTL_ACTION_DETAILS}`, { SearchDomainName: 'web', ActionID: hookB });
  t.equal(show.errors, undefined, JSON.stringify(show.errors));
  t.equal(show.data.searchDomain.action.url, 'https://hooks.example.com/b');

  const post = await gql(url, member.token, 'mutation { createSlackPostMessageAction(input: {viewName: "web", name: "p", apiToken: "xoxb", channels: ["#ops"], fields: [], useProxy: false}) { id } }');
  t.match(post.errors?.[0]?.message, /Slack post-message actions .* are not built in logsvc; use a Slack incoming webhook action \(createSlackAction\)/);
  const upload = await gql(url, member.token, 'mutation { createUploadFileAction(input: {viewName: "web", name: "u", fileName: "out.csv"}) { id } }');
  t.match(upload.errors?.[0]?.message, /upload-file actions .* are not built in logsvc/);
});

t.test('legacy REST notifiers: create, list, get, delete (204) over the same actions', async (t) => {
  const path = '/api/v1/repositories/web/alertnotifiers';
  const created = await api(url, path, {
    token: member.token,
    body: JSON.stringify({ entity: 'WebHookNotifier', name: 'legacy-hook', properties: { url: 'https://hooks.example.com/legacy', method: 'POST', headers: { 'X-Token': 'abc' }, bodyTemplate: '{alert_name}', ignoreSSL: false, useProxy: false } }),
  });
  t.equal(created.status, 200, created.text);
  const n = created.json();
  t.match(n, { entity: 'WebHookNotifier', name: 'legacy-hook', properties: { url: 'https://hooks.example.com/legacy', method: 'POST', headers: { 'X-Token': 'abc' }, bodyTemplate: '{alert_name}' } });
  const listed = (await api(url, `${path}/`, { token: member.token })).json() as Record<string, unknown>[];
  t.ok(listed.some((x) => x.id === n.id) && listed.some((x) => x.id === hookA && x.entity === 'WebHookNotifier'), 'lists GraphQL-made actions too');
  t.strictSame((await api(url, `/api/v1/dataspaces/web/alertnotifiers/${n.id}`, { token: member.token })).json(), n);
  const gqlView = await mustGql(url, member.token, 'query($id: String!) { searchDomain(name: "web") { action(id: $id) { ... on WebhookAction { headers { header value } } } } }', { id: n.id });
  t.strictSame(gqlView.searchDomain.action.headers, [{ header: 'X-Token', value: 'abc' }], 'the same action through GraphQL');
  const bad = await api(url, path, { token: member.token, body: JSON.stringify({ entity: 'SlackPostMessageNotifier', name: 'x', properties: {} }) });
  t.equal(bad.status, 400);
  t.match(bad.text, /entity: "SlackPostMessageNotifier"; one of .*WebHookNotifier/);
  t.equal((await api(url, `${path}/${n.id}`, { token: outsider.token })).status, 404, 'non-members do not see it');
  t.equal((await api(url, `${path}/${n.id}`, { token: member.token, method: 'DELETE' })).status, 204);
  t.equal((await api(url, `${path}/${n.id}`, { token: member.token })).status, 404);
});

t.test('alerts and actions survive a restart', async (t) => {
  const before = (await restAlert(url, member.token, 'web', 'GET')).json();
  t.ok(before.length > 0);
  t.equal(await node.stop(), 0);
  const again = await startNode(t, { dataDir: node.dataDir, config: '[alerts]\nenabled = false\n' });
  t.strictSame((await restAlert(again.url, again.adminToken, 'web', 'GET')).json(), before);
  const hooks = await mustGql(again.url, again.adminToken, '{ searchDomain(name: "web") { actions { ... on WebhookAction { name url } } } }');
  t.ok(hooks.searchDomain.actions.some((x: { name?: string; url?: string }) => x.name === 'hook-a' && x.url === 'https://hooks.example.com/a'), 'sealed properties open again after the restart');
});
