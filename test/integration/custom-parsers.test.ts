/**
 * Custom parsers end to end on a real node: a JSON parser for an application log with a nested
 * timestamp and a regex parser for a custom line format with tags, saved through createParserV2
 * (test cases run on save), assigned to ingest tokens and applied to unstructured, raw and
 * structured ingest; listing with the built-ins, a failing test case naming itself, aggregates
 * refused, parse errors marking and keeping the event, deletion rules.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';
import { createRepo, mustGql, queryJson, waitForCount } from '../helpers/query.js';

const CREATE = `mutation($i: CreateParserInputV2!) { createParserV2(input: $i) { id name isBuiltIn script fieldsToTag testCases { event { rawString } } } }`;

const JSON_SCRIPT = `parseJson()
| parseTimestamp("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", field=meta.time)
| drop([meta.time])`;
const JSON_LINE = (time: string, service: string, msg: string) => JSON.stringify({ meta: { time, host: 'h1' }, level: 'ERROR', service, msg });

const REGEX_SCRIPT = `/^(?<ts>\\S+ \\S+) \\[(?<node>[^\\]]+)\\] (?<level>[A-Z]+) (?<component>\\w+): (?<message>.*)$/
| parseTimestamp("yyyy-MM-dd HH:mm:ss.SSS", field=ts, timezone="UTC")
| drop([ts])`;

/** A whole second, so the texts below hold exact milliseconds. */
const base0 = Math.floor(Date.now() / 1000) * 1000;
const iso = (offset: number): string => new Date(base0 + offset).toISOString();
const line = (offset: number): string => iso(offset).replace('T', ' ').slice(0, 23);

function input(repositoryName: string, name: string, script: string, extra: Record<string, unknown> = {}) {
  return { name, script, repositoryName, testCases: [], fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], ...extra };
}

t.test('custom parsers', async (t) => {
  t.setTimeout(120_000);
  const node = await startNode(t);
  const base = node.url;
  const admin = node.adminToken;
  const repo = await createRepo(base, admin, 'parsed');

  await t.test('save with passing test cases; list with the built-ins', async (t) => {
    const saved = await mustGql(base, admin, CREATE, {
      i: input('parsed', 'app-json', JSON_SCRIPT, {
        fieldsToTag: ['service'],
        testCases: [
          {
            event: { rawString: JSON_LINE('2026-11-21T10:00:00.123+01:00', 'billing', 'card declined') },
            outputAssertions: [{ outputEventIndex: 0, assertions: { fieldsHaveValues: [{ fieldName: '@timestamp', expectedValue: '1795251600123' }, { fieldName: '#service', expectedValue: 'billing' }, { fieldName: 'meta.host', expectedValue: 'h1' }], fieldsNotPresent: ['meta.time', 'service'] } }],
          },
        ],
      }),
    });
    t.equal(saved.createParserV2.name, 'app-json');
    t.equal(saved.createParserV2.isBuiltIn, false);
    t.strictSame(saved.createParserV2.fieldsToTag, ['service']);
    await mustGql(base, admin, CREATE, {
      i: input('parsed', 'line-regex', REGEX_SCRIPT, {
        fieldsToTag: ['level'],
        testCases: [{ event: { rawString: '2026-11-21 09:00:00.500 [web-3] WARN payment: retry 2 of 5' }, outputAssertions: [{ outputEventIndex: 0, assertions: { fieldsHaveValues: [{ fieldName: 'component', expectedValue: 'payment' }, { fieldName: '#level', expectedValue: 'WARN' }, { fieldName: '@timestamp', expectedValue: '1795251600500' }] } }] }],
      }),
    });
    const list = await mustGql(base, admin, '{ repository(name: "parsed") { parsers { id name isBuiltIn script fieldsToTag } one: parser(name: "line-regex") { name script } } }');
    const byName = new Map(list.repository.parsers.map((p: any) => [p.name, p]));
    for (const b of ['kv', 'json', 'accesslog', 'syslog']) t.equal((byName.get(b) as any)?.isBuiltIn, true, `built-in ${b} listed`);
    t.equal((byName.get('app-json') as any).isBuiltIn, false);
    t.equal(list.repository.one.script, REGEX_SCRIPT);
  });

  await t.test('refusals: failing test case named, aggregates, duplicates, built-in names', async (t) => {
    const failing = await gql(base, admin, CREATE, {
      i: input('parsed', 'bad-case', REGEX_SCRIPT, {
        testCases: [
          { event: { rawString: '2026-11-21 09:00:00.500 [web-3] WARN payment: ok' }, outputAssertions: [] },
          { event: { rawString: '2026-11-21 09:00:00.500 [web-3] WARN payment: ok' }, outputAssertions: [{ outputEventIndex: 0, assertions: { fieldsHaveValues: [{ fieldName: 'component', expectedValue: 'billing' }] } }] },
        ],
      }),
    });
    t.match(failing.errors?.[0]?.message, /test case 2 .* failed: output event 0 field component is "payment", expected "billing"/);
    const agg = await gql(base, admin, CREATE, { i: input('parsed', 'agg', 'count()') });
    t.match(agg.errors?.[0]?.message, /cannot be used in a parser/);
    const dup = await gql(base, admin, CREATE, { i: input('parsed', 'app-json', 'kvParse()') });
    t.match(dup.errors?.[0]?.message, /already exists/);
    const over = await mustGql(base, admin, CREATE, { i: input('parsed', 'scratch', 'kvParse()', { allowOverwritingExistingParser: true }) });
    t.equal(over.createParserV2.script, 'kvParse()');
    const builtin = await gql(base, admin, CREATE, { i: input('parsed', 'json', 'kvParse()') });
    t.match(builtin.errors?.[0]?.message, /built-in/);
    const broken = await gql(base, admin, CREATE, { i: input('parsed', 'broken', 'regex("(")') });
    t.match(broken.errors?.[0]?.message, /^script: /);
  });

  await t.test('ingest tokens apply custom parsers', async (t) => {
    const tok = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "parsed", name: "json-in", parser: "app-json"}) { token parser { id name isBuiltIn } } }');
    const saved = await mustGql(base, admin, 'query { repository(name: "parsed") { parser(name: "app-json") { id } } }');
    t.strictSame(tok.addIngestTokenV3.parser, { id: saved.repository.parser.id, name: 'app-json', isBuiltIn: false }, "the token's parser by the parser's own id");
    t.not(saved.repository.parser.id, 'app-json');
    const listed = await mustGql(base, admin, 'query { repository(name: "parsed") { ingestTokens { name parser { id name isBuiltIn } } } }');
    const byName = Object.fromEntries((listed.repository.ingestTokens as { name: string; parser: unknown }[]).map((x) => [x.name, x.parser]));
    t.strictSame(byName['json-in'], { id: saved.repository.parser.id, name: 'app-json', isBuiltIn: false });
    const jsonToken = tok.addIngestTokenV3.token as string;
    const lines = [JSON_LINE(iso(-60_000), 'billing', 'a'), JSON_LINE(iso(-59_000), 'search', 'b'), JSON_LINE('yesterday', 'billing', 'bad time')];
    const r = await api(base, '/api/v1/ingest/humio-unstructured', { token: jsonToken, body: JSON.stringify([{ messages: lines, fields: { env: 'prod' } }]) });
    t.equal(r.status, 200, r.text);
    const raw = await api(base, '/api/v1/ingest/raw', { token: jsonToken, body: JSON_LINE(iso(-58_000), 'billing', 'raw one') });
    t.equal(raw.status, 200, raw.text);

    await mustGql(base, admin, 'mutation { assignParserToIngestTokenV2(input: {repositoryName: "parsed", tokenName: "default", parser: "line-regex"}) { name } }');
    const r2 = await api(base, '/api/v1/ingest/humio-unstructured', { token: repo.ingestToken, body: JSON.stringify([{ messages: [`${line(-50_000)} [web-3] WARN payment: retry`, `${line(-49_000)} [web-1] ERROR db: down`] }]) });
    t.equal(r2.status, 200, r2.text);

    t.equal(await waitForCount(base, 'parsed', admin, 6), 6);
    const rows = await queryJson(base, 'parsed', { queryString: '#type="app-json" @error!=true | sort(@timestamp, order=asc)' }, { token: admin });
    t.strictSame(rows.map((e) => [e['#service'], e.msg, e.env ?? null]), [
      ['billing', 'a', 'prod'],
      ['search', 'b', 'prod'],
      ['billing', 'raw one', null],
    ], 'tags from fieldsToTag, item fields after parsing, raw ingest too');
    t.equal(rows[0]!['@timestamp'], base0 - 60_000);
    t.equal(rows[0]!['meta.time'], undefined);
    const errs = await queryJson(base, 'parsed', { queryString: '@error=true' }, { token: admin });
    t.equal(errs.length, 1, 'the event with a bad timestamp is kept');
    t.equal(errs[0]!.msg, 'bad time');
    t.match(errs[0]!['@error_msg'], /parseTimestamp/);
    const regexRows = await queryJson(base, 'parsed', { queryString: '#type="line-regex" | sort(@timestamp, order=asc)' }, { token: admin });
    t.strictSame(regexRows.map((e) => [e['#level'], e.node, e.component, e['@timestamp']]), [
      ['WARN', 'web-3', 'payment', base0 - 50_000],
      ['ERROR', 'web-1', 'db', base0 - 49_000],
    ]);
    const byTag = await queryJson(base, 'parsed', { queryString: '#level=ERROR | count()' }, { token: admin });
    t.equal(byTag[0]!._count, '1', 'parser tags are real tags');
  });

  await t.test('an item type may name a custom parser; deletion rules', async (t) => {
    const plain = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "parsed", name: "plain"}) { token } }');
    const r = await api(base, '/api/v1/ingest/humio-unstructured', { token: plain.addIngestTokenV3.token, body: JSON.stringify([{ type: 'app-json', messages: [JSON_LINE(iso(-40_000), 'typed', 'c')] }]) });
    t.equal(r.status, 200);
    t.equal(await waitForCount(base, 'parsed', admin, 1, undefined, '#service=typed'), 1);
    const inUse = await gql(base, admin, 'mutation { deleteParser(input: {repositoryName: "parsed", id: "app-json"}) { result } }');
    t.match(inUse.errors?.[0]?.message, /used by ingest token "json-in"/);
    const list = await mustGql(base, admin, '{ repository(name: "parsed") { parser(name: "scratch") { id } } }');
    await mustGql(base, admin, 'mutation($id: String!) { deleteParser(input: {repositoryName: "parsed", id: $id}) { result } }', { id: list.repository.parser.id });
    const gone = await mustGql(base, admin, '{ repository(name: "parsed") { parser(name: "scratch") { id } } }');
    t.equal(gone.repository.parser, null);
  });

  await t.test('structured ingest through a custom parser', async (t) => {
    const tok = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "parsed", name: "structured-in", parser: "app-json"}) { token } }');
    const body = [
      {
        tags: { host: 's1' },
        events: [
          // The raw string is parsed; attributes are fields the parser sees (and keeps).
          { timestamp: base0 - 30_000, rawstring: JSON_LINE(iso(-20_000), 'structsvc', 'with raw'), attributes: { region: 'eu' } },
          // No raw string: the parser reads the JSON of the attributes.
          { timestamp: base0 - 30_000, attributes: { meta: { time: iso(-19_000), host: 'h2' }, service: 'structsvc', msg: 'from attributes' } },
        ],
      },
    ];
    const r = await api(base, '/api/v1/ingest/humio-structured', { token: tok.addIngestTokenV3.token, body: JSON.stringify(body) });
    t.equal(r.status, 200, r.text);
    t.equal(await waitForCount(base, 'parsed', admin, 2, undefined, '#service=structsvc'), 2);
    const rows = await queryJson(base, 'parsed', { queryString: '#service=structsvc | sort(@timestamp, order=asc)' }, { token: admin });
    t.strictSame(rows.map((e) => [e.msg, e['@timestamp'], e['#host'], e['#type'], e.region ?? null, e['@error'] ?? null]), [
      ['with raw', base0 - 20_000, 's1', 'app-json', 'eu', null],
      ['from attributes', base0 - 19_000, 's1', 'app-json', null, null],
    ], 'the parser sets the time and the tag; the sender tags and attributes stay');
  });

  await t.test("humioctl's operations: RepoOrViewName variables and the YAML export", async (t) => {
    // The variable declarations humioctl's CreateParser / DeleteParserByID / GetParserYAMLByName use.
    const created = await mustGql(
      base,
      admin,
      `mutation CreateParser($RepositoryName: RepoOrViewName!, $Name: String!, $Script: String!, $TestCases: [ParserTestCaseInput!]!, $FieldsToTag: [String!]!, $FieldsToBeRemovedBeforeParsing: [String!]!, $AllowOverridingExistingParser: Boolean!) {
        createParserV2(input: { name: $Name, script: $Script, testCases: $TestCases, repositoryName: $RepositoryName, fieldsToTag: $FieldsToTag, fieldsToBeRemovedBeforeParsing: $FieldsToBeRemovedBeforeParsing, allowOverwritingExistingParser: $AllowOverridingExistingParser }) { id name }
      }`,
      { RepositoryName: 'parsed', Name: 'ctl', Script: 'kvParse()', TestCases: [{ event: { rawString: 'a=1' }, outputAssertions: [] }], FieldsToTag: ['a'], FieldsToBeRemovedBeforeParsing: [], AllowOverridingExistingParser: false },
    );
    t.equal(created.createParserV2.name, 'ctl');
    const yaml = await mustGql(base, admin, 'query GetParserYAMLByName($RepositoryName: String!, $ParserName: String!) { repository(name: $RepositoryName) { parser(name: $ParserName) { name yamlTemplate } } }', { RepositoryName: 'parsed', ParserName: 'ctl' });
    t.match(yaml.repository.parser.yamlTemplate, /^\$schema: .*\nname: "ctl"\nscript: "kvParse\(\)"\ntagFields:\n  - "a"\n/);
    const bad = await gql(base, admin, 'mutation($R: RepoOrViewName!) { deleteParser(input: {repositoryName: $R, id: "x"}) { result } }', { R: 5 });
    t.match(bad.errors?.[0]?.message, /RepoOrViewName must be a string/);
    await mustGql(base, admin, 'mutation DeleteParserByID($RepositoryName: RepoOrViewName!, $ParserID: String!) { deleteParser(input: { repositoryName: $RepositoryName, id: $ParserID }) { __typename } }', { RepositoryName: 'parsed', ParserID: created.createParserV2.id });
    t.equal((await mustGql(base, admin, '{ repository(name: "parsed") { parser(name: "ctl") { id } } }')).repository.parser, null);
  });
});

t.test('custom parsers never run on the HTTP thread; their output is bounded per request', async (t) => {
  t.setTimeout(120_000);
  // Bodies up to 64 MiB would be parsed inline by size alone: only the custom parser sends them to a worker.
  const node = await startNode(t, { config: '[ingest]\noffload_bytes = 67108864\nmax_events_per_request = 50000\n' });
  const base = node.url;
  const admin = node.adminToken;
  await createRepo(base, admin, 'bounded');
  await mustGql(base, admin, CREATE, { i: input('bounded', 'kv-heavy', 'kvParse() | regex("value(?<n>\\\\d+)", field=key7) | lower(key3)') });
  await mustGql(base, admin, CREATE, { i: input('bounded', 'chars', 'regex("(?<c>\\\\w)", repeat=true)') });
  const heavy = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "bounded", name: "heavy", parser: "kv-heavy"}) { token } }');
  const chars = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "bounded", name: "chars", parser: "chars"}) { token } }');

  await t.test('the node answers other requests while a parser works through a large body', async (t) => {
    const msg = Array.from({ length: 20 }, (_, i) => `key${i}=value${i}`).join(' ');
    const body = JSON.stringify([{ messages: Array.from({ length: 40_000 }, () => msg) }]);
    const t0 = performance.now();
    let ingestMs = 0;
    const ingest = api(base, '/api/v1/ingest/humio-unstructured', { token: heavy.addIngestTokenV3.token, body, timeoutMs: 60_000 }).then((r) => {
      ingestMs = performance.now() - t0;
      return r;
    });
    let slowest = 0;
    let probes = 0;
    while (ingestMs === 0) {
      const p0 = performance.now();
      const s = await api(base, '/api/v1/status');
      t.equal(s.status, 200);
      slowest = Math.max(slowest, performance.now() - p0);
      probes++;
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await ingest;
    t.equal(r.status, 200, r.text);
    t.ok(ingestMs > 300, `the parse took long enough to tell (${Math.round(ingestMs)} ms)`);
    t.ok(slowest < ingestMs / 2, `status answered within ${Math.round(slowest)} ms (${probes} probes) while the request took ${Math.round(ingestMs)} ms`);
  });

  await t.test('output events over the request limit: 400 before anything is stored', async (t) => {
    // 600 inputs (within the limit of 50,000) that the parser turns into 60,000 events.
    const r = await api(base, '/api/v1/ingest/humio-unstructured', { token: chars.addIngestTokenV3.token, body: JSON.stringify([{ messages: Array.from({ length: 600 }, () => 'x'.repeat(100)) }]) });
    t.equal(r.status, 400, r.text);
    t.match(r.text, /custom parser made more than 50000 events \(ingest\.max_events_per_request\)/);
    const ok = await api(base, '/api/v1/ingest/humio-unstructured', { token: chars.addIngestTokenV3.token, body: JSON.stringify([{ messages: ['abc'] }]) });
    t.equal(ok.status, 200, ok.text);
    t.equal(await waitForCount(base, 'bounded', admin, 3, undefined, '#type=chars'), 3, 'only the request within the bound was stored');
  });
});

t.test('parser tags past the datasource limit: the request is stored, the extra events without them', async (t) => {
  t.setTimeout(60_000);
  const node = await startNode(t, { config: '[ingest]\nmax_datasources_per_repository = 3\n' });
  const base = node.url;
  const admin = node.adminToken;
  await createRepo(base, admin, 'capped');
  await mustGql(base, admin, CREATE, { i: input('capped', 'svc', 'kvParse()', { fieldsToTag: ['svc'] }) });
  const tok = await mustGql(base, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "capped", name: "svc", parser: "svc"}) { token } }');
  const send = (messages: string[]) => api(base, '/api/v1/ingest/humio-unstructured', { token: tok.addIngestTokenV3.token, body: JSON.stringify([{ messages }]) });
  // Room for three: one is set aside for the fallback tag set {type}, a and b keep their tags, c and
  // d fall back (marked).
  const r = await send(['svc=a n=1', 'svc=b n=2', 'svc=c n=3', 'svc=d n=4', 'svc=a n=5']);
  t.equal(r.status, 200, r.text);
  t.equal(await waitForCount(base, 'capped', admin, 5), 5, 'every event is stored');
  const rows = await queryJson(base, 'capped', { queryString: 'sort(n, order=asc)' }, { token: admin });
  const tagged = rows.filter((e) => e['#svc'] !== undefined).map((e) => e['#svc']);
  const fellBack = rows.filter((e) => e['#svc'] === undefined);
  t.equal(tagged.length + fellBack.length, 5);
  t.strictSame(tagged.sort(), ['a', 'a', 'b'], 'the first tag sets keep their tags');
  t.equal(fellBack.length, 2, 'c and d are stored without the parser\'s tags');
  for (const e of fellBack) t.match(e['@error_msg'], /max_datasources_per_repository/);
  t.equal(new Set(tagged).size + (fellBack.length > 0 ? 1 : 0), 3, 'exactly the three datasources the limit allows');
  // Later requests use what exists: known tag sets keep their tags.
  t.equal((await send(['svc=a n=6'])).status, 200);
  t.equal(await waitForCount(base, 'capped', admin, 1, undefined, 'n=6 #svc=a'), 1);
});
