import t from 'tap';
import { decodeGroupEvents, decodeRecord, encodeRecord, groupSection, readSummary, RECORD_VERSION, type IngestRecord } from '../../../src/events/index.js';
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

t.test('RECORD_VERSION is 1', async (t) => {
  t.equal(RECORD_VERSION, 1);
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

t.test('the wire layout: u32 summary length, msgpack summary, then one JSON events section per group', async (t) => {
  const r = sample();
  const sections = r.groups.map((g) => Buffer.from(JSON.stringify(g.events.map((e) => [e.timestamp, e.timezone, e.rawstring, e.fields]))));
  const { payload, summary } = encodeRecord(r);
  const head = pack(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  t.ok(payload.equals(Buffer.concat([len, head, ...sections])), 'exactly those bytes');
  t.strictSame(summary.groups.map((g) => g.len), sections.map((x) => x.length), 'each group names its section length');
  r.groups.forEach((g, i) => t.strictSame(decodeGroupEvents(groupSection(payload, summary, i)), g.events, `group ${i} decodes on its own`));
});

t.test('an unsupported version is E_STATE_CORRUPT', async (t) => {
  const framed = (v: unknown): Buffer => {
    const head = pack(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.length, 0);
    return Buffer.concat([len, head]);
  };
  t.throws(() => decodeRecord(framed({ v: 2, repo: 'r', at: 1, groups: [] })), { code: 'E_STATE_CORRUPT', message: /unsupported version 2/ });
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
