import t from 'tap';
import { decodeGroupColumns, decodeGroupEvents, decodeRecord, encodeRecord, groupSection, readSummary, RECORD_VERSION, type IngestRecord } from '../../../src/events/index.js';
import { pack } from '../../../src/lib/msgpack.js';

const sample = (): IngestRecord => ({
  repo: 'sandbox',
  at: 1_700_000_000_123,
  groups: [
    {
      ds: 'AAAAAAAAAAAAAAAAAAAAAA',
      tags: { host: 'web-1', type: 'accesslog' },
      events: [
        { timestamp: 1_700_000_000_000, timezone: 'Z', rawstring: 'GET /index.html 200', fields: { method: 'GET', status: '200' } },
        { timestamp: 1_699_999_999_999, timezone: '+02:00', rawstring: 'second', fields: {} },
      ],
    },
  ],
});

t.test('RECORD_VERSION is 3', async (t) => {
  t.equal(RECORD_VERSION, 3);
});

t.test('encodeRecord/decodeRecord round trip keeps every value', async (t) => {
  const r = sample();
  const { payload: buf, summary } = encodeRecord(r);
  t.ok(Buffer.isBuffer(buf), 'encodes to a Buffer');
  t.strictSame(readSummary(buf), summary, 'the summary read back equals the one returned');
  t.strictSame(
    summary.groups.map((g) => [g.ds, g.n]),
    r.groups.map((g) => [g.ds, g.events.length]),
    'the summary names each group and counts its events',
  );
  t.strictSame(decodeRecord(buf), r);
  t.strictSame(decodeRecord(new Uint8Array(buf)), r, 'a plain Uint8Array decodes too');
});

t.test('round trip of unicode text, empty strings and empty field maps', async (t) => {
  const r: IngestRecord = {
    repo: 'répo-ü',
    at: 0,
    groups: [
      {
        ds: '',
        tags: {},
        events: [
          { timestamp: 0, timezone: '', rawstring: '', fields: {} },
          { timestamp: -86_400_000, timezone: 'Europe/Zürich', rawstring: 'héllo wörld 日本語 🎉 \u0000 nul \n newline', fields: { 'ключ': 'значение', emoji: '🚀🚀', empty: '' } },
          { timestamp: 8.64e15, timezone: 'Z', rawstring: 'x'.repeat(70_000), fields: { '': 'empty name' } },
        ],
      },
      { ds: 'second', tags: { 'a.b': '', c: 'ü' }, events: [] },
    ],
  };
  const back = decodeRecord(encodeRecord(r).payload);
  t.strictSame(back, r);
  t.equal(back.groups[0]!.events[1]!.rawstring, r.groups[0]!.events[1]!.rawstring, 'unicode raw string exact');
  t.equal(back.groups[0]!.events[2]!.rawstring.length, 70_000);
});

t.test('round trip of a record with no groups and one with many groups', async (t) => {
  const none: IngestRecord = { repo: 'r', at: 5, groups: [] };
  t.strictSame(decodeRecord(encodeRecord(none).payload), none);

  const many: IngestRecord = { repo: 'r', at: 6, groups: [] };
  for (let g = 0; g < 300; g++) {
    const events = [];
    for (let e = 0; e < (g % 7) + 1; e++) events.push({ timestamp: g * 1000 + e, timezone: 'Z', rawstring: `g${g} e${e}`, fields: e % 2 === 0 ? { g: String(g), e: String(e) } : {} });
    many.groups.push({ ds: `ds-${g}`, tags: { n: String(g) }, events });
  }
  const back = decodeRecord(encodeRecord(many).payload);
  t.equal(back.groups.length, 300);
  t.equal(back.groups.reduce((n, g) => n + g.events.length, 0), many.groups.reduce((n, g) => n + g.events.length, 0));
  t.strictSame(back, many);
});

/** A version 3 section built by hand from the layout in record.ts (not by the encoder). */
function binarySection(n: number, ts: number[], names: string[], strings: (string | null)[]): Buffer {
  const namesJson = Buffer.from(JSON.stringify(names));
  const head = Buffer.alloc(9);
  head[0] = 3;
  head.writeUInt32LE(n, 1);
  head.writeUInt32LE(namesJson.length, 5);
  const times = Buffer.alloc(8 * n);
  ts.forEach((x, i) => times.writeDoubleLE(x, 8 * i));
  const lengths = Buffer.alloc(4 * strings.length);
  strings.forEach((x, i) => lengths.writeUInt32LE(x === null ? 0 : x.length + 1, 4 * i));
  return Buffer.concat([head, namesJson, times, lengths, Buffer.from(strings.map((x) => x ?? '').join(''))]);
}

t.test('the wire layout: u32 summary length, msgpack summary, then one binary section of columns per group', async (t) => {
  const r = sample();
  // Zones, raw strings, then each field column (order of first appearance); null where an event lacks the field.
  const sections = [binarySection(2, [1_700_000_000_000, 1_699_999_999_999], ['method', 'status'], ['Z', '+02:00', 'GET /index.html 200', 'second', 'GET', null, '200', null])];
  const { payload, summary } = encodeRecord(r);
  const head = pack(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  t.ok(payload.equals(Buffer.concat([len, head, ...sections])), 'exactly those bytes');
  t.strictSame(summary.groups.map((g) => g.len), sections.map((x) => x.length), 'each group names its section length');
  t.strictSame(summary.groups.map((g) => g.b), [48 + 19 + (6 + 3 + 8) + (6 + 3 + 8) + 48 + 6], 'the size estimate: raw strings, field names and values, and 48 per event');
  r.groups.forEach((g, i) => t.strictSame(decodeGroupEvents(groupSection(payload, summary, i)), g.events, `group ${i} decodes on its own`));
});

t.test('a lone surrogate comes back as U+FFFD, and the strings after it are intact', async (t) => {
  const r: IngestRecord = { repo: 'r', at: 1, groups: [{ ds: 'd', tags: {}, events: [{ timestamp: 1, timezone: 'Z', rawstring: 'a\ud800b', fields: { f: '\udc00', g: 'after' } }] }] };
  const back = decodeRecord(encodeRecord(r).payload).groups[0]!.events[0]!;
  t.equal(back.rawstring, 'a\ufffdb');
  t.strictSame(back.fields, { f: '\ufffd', g: 'after' });
});

t.test('a version 3 section that does not add up is E_STATE_CORRUPT', async (t) => {
  const good = binarySection(2, [1, 2], ['f'], ['Z', 'Z', 'ab', 'c', 'x', null]);
  t.strictSame(decodeGroupColumns(good), { n: 2, ts: [1, 2], tz: ['Z', 'Z'], raw: ['ab', 'c'], names: ['f'], cols: [['x', null]] });
  const cases: [string, Buffer, RegExp][] = [
    ['text longer than the lengths', Buffer.concat([good, Buffer.from('y')]), /longer than its lengths/],
    ['text shorter than the lengths', good.subarray(0, good.length - 1), /shorter than its lengths/],
    ['no time zone', binarySection(1, [1], [], [null, 'r']), /no time zone/],
    ['no raw string', binarySection(1, [1], [], ['Z', null]), /no raw string/],
    ['names not a list of strings', binarySection(1, [1], [1 as unknown as string], ['Z', 'r', 'v']), /not a list of strings/],
    ['a header only', good.subarray(0, 5), /shorter than its header/],
    ['a repeated field name', binarySection(1, [1], ['f', 'f'], ['Z', 'r', 'a', 'b']), /a field name repeats/],
  ];
  const claims = Buffer.from(good);
  claims.writeUInt32LE(1_000_000, 1);
  cases.push(['more events than the section holds', claims, /too short for 1000000 events/]);
  const badNames = Buffer.from(good);
  badNames[9] = 0x7b;
  cases.push(['names that are not JSON', badNames, /field names do not decode/]);
  for (const [what, section, message] of cases) {
    t.throws(() => decodeGroupColumns(section), { code: 'E_STATE_CORRUPT', message }, what);
    t.throws(() => decodeGroupEvents(section), { code: 'E_STATE_CORRUPT' }, `${what} (by event)`);
  }
  for (let cut = 0; cut < good.length; cut++) t.throws(() => decodeGroupColumns(good.subarray(0, cut)), { code: 'E_STATE_CORRUPT' }, `cut at ${cut}`);
});

/** A record as an older build wrote it: its version, and one section per group from `section`. */
function olderRecord(v: number, r: IngestRecord, section: (g: IngestRecord['groups'][number]) => Buffer): Buffer {
  const sections = r.groups.map(section);
  const head = pack({ v, repo: r.repo, at: r.at, groups: r.groups.map((g, i) => ({ ds: g.ds, tags: g.tags, n: g.events.length, len: sections[i]!.length, b: 0 })) });
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  return Buffer.concat([len, head, ...sections]);
}

/** Version 2: one JSON object of columns per group. */
const versionTwo = (r: IngestRecord): Buffer =>
  olderRecord(2, r, (g) => {
    const names: string[] = [];
    for (const e of g.events) for (const k of Object.keys(e.fields)) if (!names.includes(k)) names.push(k);
    const cols = names.map((k) => g.events.map((e) => (Object.hasOwn(e.fields, k) ? e.fields[k]! : null)));
    return Buffer.from(JSON.stringify({ n: g.events.length, ts: g.events.map((e) => e.timestamp), tz: g.events.map((e) => e.timezone), raw: g.events.map((e) => e.rawstring), names, cols }));
  });

/** Version 1: one JSON array of [ts, tz, raw, fields] per group. */
const versionOne = (r: IngestRecord): Buffer => olderRecord(1, r, (g) => Buffer.from(JSON.stringify(g.events.map((e) => [e.timestamp, e.timezone, e.rawstring, e.fields]))));

for (const [v, older] of [[1, versionOne], [2, versionTwo]] as const) {
  t.test(`version ${v} records (a queue written before the upgrade) still decode, by event and by column`, async (t) => {
    const r = sample();
    r.groups.push({ ds: 'B', tags: {}, events: [{ timestamp: 5, timezone: 'Z', rawstring: 'only x', fields: { x: '1', method: 'PUT' } }] });
    const old = older(r);
    t.strictSame(decodeRecord(old), r);
    const summary = readSummary(old);
    t.equal(summary.v, v);
    const now = encodeRecord(r);
    t.strictSame(decodeGroupColumns(groupSection(old, summary, 0)), decodeGroupColumns(groupSection(now.payload, now.summary, 0)), 'the same columns from either version');
    t.strictSame(decodeGroupColumns(groupSection(old, summary, 1)), { n: 1, ts: [5], tz: ['Z'], raw: ['only x'], names: ['x', 'method'], cols: [['1'], ['PUT']] });
  });
}

t.test('a version 2 section whose columns do not fit together is E_STATE_CORRUPT', async (t) => {
  const good = { n: 2, ts: [1, 2], tz: ['Z', 'Z'], raw: ['a', 'b'], names: ['f'], cols: [['x', null]] };
  const bad = [
    { ...good, n: 3 },
    { ...good, ts: [1] },
    { ...good, raw: ['a'] },
    { ...good, names: ['f', 'g'] },
    { ...good, cols: [['x']] },
    { ...good, cols: 'x' },
    { ...good, tz: undefined },
    null,
  ];
  t.strictSame(decodeGroupColumns(Buffer.from(JSON.stringify(good))), good);
  for (const b of bad) {
    const section = Buffer.from(JSON.stringify(b));
    t.throws(() => decodeGroupColumns(section), { code: 'E_STATE_CORRUPT' }, JSON.stringify(b));
    t.throws(() => decodeGroupEvents(section), { code: 'E_STATE_CORRUPT' });
  }
  t.throws(() => decodeGroupColumns(Buffer.from('{"n":')), { code: 'E_STATE_CORRUPT', message: /does not decode/ });
});

t.test('an unsupported version is E_STATE_CORRUPT', async (t) => {
  const framed = (v: unknown): Buffer => {
    const head = pack(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.length, 0);
    return Buffer.concat([len, head]);
  };
  t.throws(() => decodeRecord(framed({ v: 4, repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT', message: /unsupported version 4/ });
  t.throws(() => decodeRecord(framed({ v: 0, repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT', message: /unsupported version 0/ });
  t.throws(() => decodeRecord(framed({ repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT', message: /unsupported version undefined/ });
  t.throws(() => decodeRecord(framed(null)), { code: 'E_STATE_CORRUPT', message: /unsupported version/ });
  t.throws(() => decodeRecord(framed({ v: '1', repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT' }, 'the string "1" is not version 1');
  t.throws(() => decodeRecord(Buffer.alloc(2)), { code: 'E_STATE_CORRUPT', message: /too short/ });
});

t.test('field names that are Object.prototype members survive the queue format', async (t) => {
  // Ingest (flatten.ts, field-sink.ts) deliberately keeps a JSON member named "__proto__" as an
  // ordinary own field; the digest-queue record must carry it unchanged, or a replayed event differs
  // from the live one.
  const fields = JSON.parse('{"__proto__":"p","constructor":"c","toString":"s","hasOwnProperty":"h"}') as Record<string, string>;
  t.ok(Object.hasOwn(fields, '__proto__'), 'precondition: own "__proto__" field');
  const r: IngestRecord = { repo: 'r', at: 1, groups: [{ ds: 'd', tags: {}, events: [{ timestamp: 1, timezone: 'Z', rawstring: 'x', fields }] }] };
  const back = decodeRecord(encodeRecord(r).payload).groups[0]!.events[0]!.fields;
  t.strictSame(Object.keys(back).sort(), ['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
  t.equal(Object.getOwnPropertyDescriptor(back, '__proto__')?.value, 'p', 'the "__proto__" field keeps its name and value');
  t.equal(back['constructor'], 'c');
  t.equal(back['toString'], 's');
});
