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

t.test('RECORD_VERSION is 2', async (t) => {
  t.equal(RECORD_VERSION, 2);
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

t.test('the wire layout: u32 summary length, msgpack summary, then one JSON section of columns per group', async (t) => {
  const r = sample();
  // Columns in order of first appearance, null where an event lacks the field.
  const sections = [
    Buffer.from(
      JSON.stringify({
        n: 2,
        ts: [1_700_000_000_000, 1_699_999_999_999],
        tz: ['Z', '+02:00'],
        raw: ['GET /index.html 200', 'second'],
        names: ['method', 'status'],
        cols: [
          ['GET', null],
          ['200', null],
        ],
      }),
    ),
  ];
  const { payload, summary } = encodeRecord(r);
  const head = pack(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  t.ok(payload.equals(Buffer.concat([len, head, ...sections])), 'exactly those bytes');
  t.strictSame(summary.groups.map((g) => g.len), sections.map((x) => x.length), 'each group names its section length');
  r.groups.forEach((g, i) => t.strictSame(decodeGroupEvents(groupSection(payload, summary, i)), g.events, `group ${i} decodes on its own`));
});

/** A version 1 record as the previous build wrote it: one JSON array of [ts, tz, raw, fields] per group. */
function versionOne(r: IngestRecord): Buffer {
  const sections = r.groups.map((g) => Buffer.from(JSON.stringify(g.events.map((e) => [e.timestamp, e.timezone, e.rawstring, e.fields]))));
  const head = pack({ v: 1, repo: r.repo, at: r.at, groups: r.groups.map((g, i) => ({ ds: g.ds, tags: g.tags, n: g.events.length, len: sections[i]!.length, b: 0 })) });
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  return Buffer.concat([len, head, ...sections]);
}

t.test('version 1 records (a queue written before the upgrade) still decode, by event and by column', async (t) => {
  const r = sample();
  r.groups.push({ ds: 'B', tags: {}, events: [{ timestamp: 5, timezone: 'Z', rawstring: 'only x', fields: { x: '1', method: 'PUT' } }] });
  const old = versionOne(r);
  t.strictSame(decodeRecord(old), r);
  const summary = readSummary(old);
  t.equal(summary.v, 1);
  t.strictSame(decodeGroupColumns(groupSection(old, summary, 0)), decodeGroupColumns(groupSection(encodeRecord(r).payload, encodeRecord(r).summary, 0)), 'the same columns from either version');
  t.strictSame(decodeGroupColumns(groupSection(old, summary, 1)), { n: 1, ts: [5], tz: ['Z'], raw: ['only x'], names: ['x', 'method'], cols: [['1'], ['PUT']] });
});

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
  t.throws(() => decodeRecord(framed({ v: 3, repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT', message: /unsupported version 3/ });
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
