/**
 * The native parser's HEC and Elasticsearch bulk modes (native/structured_ingest.cc parseDoor)
 * against the JavaScript doors (src/ingest/doors/ hec.ts, elastic-bulk.ts, then prepareRecord):
 * wherever it takes a body it must make the same record bytes (and for bulk the same answer
 * items), over seeded random bodies that reach the forms it takes (escapes, non-ASCII and astral
 * text, numbers of every form, nested object events, HEC times as numbers and strings, Beats' host
 * and file names, action metadata, messages the kv parser reads: pairs quoted and bare, escapes,
 * leading timestamps in and out of its window, keys the protocol's fields also set); it must
 * decline what it leaves to JavaScript, and never crash on a damaged body.
 */
import t from 'tap';
import { prepareDoorNatively, prepareRecord } from '../../../src/ingest/pipeline.js';
import { nativeStructuredUnavailable } from '../../../src/ingest/native-structured.js';
import { normalizeHec, type HecParams } from '../../../src/ingest/doors/hec.js';
import { bulkReply, normalizeBulk, type BulkParams } from '../../../src/ingest/doors/elastic-bulk.js';
import type { IngestLimits } from '../../../src/ingest/limits.js';
import { rnd } from '../../helpers/random.js';

const LIMITS: IngestLimits = { maxEventsPerRequest: 500, maxEventBytes: 1 << 20, maxFieldsPerEvent: 200, maxJsonDepth: 24 };
const AT = 1_763_700_000_000;
const PREFIX = 'AbCdEfGhIjKl';
const HEC_P: HecParams = { door: 'hec', raw: false, repositoryName: 'repo1' };
const BULK_P: BulkParams = { door: 'elastic-bulk' };

type Out = { payload: Buffer; items?: string } | string;

function inJs(p: HecParams | BulkParams, body: Buffer, parser: string | null, limits = LIMITS): Out {
  try {
    if (p.door === 'hec') return { payload: prepareRecord('repo1', normalizeHec(body.toString('utf8'), p, parser, limits, AT), AT).payload };
    const { groups, items } = normalizeBulk(body.toString('utf8'), p, parser, limits, AT, undefined, PREFIX);
    const reply = bulkReply(items);
    return { payload: prepareRecord('repo1', groups, AT).payload, items: `${reply.errors}:${reply.itemsJson}` };
  } catch (err) {
    return (err as Error).message;
  }
}

function natively(p: HecParams | BulkParams, body: Buffer, parser: string | null, limits = LIMITS): Out | null {
  const r = prepareDoorNatively(p, body, 'repo1', AT, limits, parser, PREFIX);
  if (r === null) return null;
  return r.reply === undefined ? { payload: r.payload } : { payload: r.payload, items: 'itemsJson' in r.reply ? `${r.reply.errors}:${r.reply.itemsJson}` : '?' };
}

/** A message tap shows: it drops an assertion whose message holds U+2028 or U+2029 (found here). */
function shown(text: string): string {
  return text.replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

function same(a: Out, b: Out): boolean {
  return typeof a !== 'string' && typeof b !== 'string' && a.payload.equals(b.payload) && a.items === b.items;
}

const WORDS = ['alpha', 'GET /index.html', '', 'a b', 'x=1', 'grüße', '🎉party', '日本語', 'tab\there', 'quote"d', 'back\\slash', 'new\nline', '\u0001ctl', '\u007f', '\u2028'];
const KEYS = ['level', 'a.b', 'user', 'Ωmega', '名前', '🎉', '__proto__', 'x-y', 'status code', 'a', 'b', '01', '4294967295', '-1', '1.5', '@host', '@source', 'message2', 'type2'];
const NUMBERS = ['0', '-0', '7', '-42', '123456789012345', '1234567890123456', '12345678901234567890', '1e21', '1E+2', '1.5', '-0.000001', '1e-7', '2.5e-3', '100.0', '5e-324', '0.1', '9007199254740993', '4.35'];
/** HEC `time` values: numbers and strings of epoch seconds, and what JavaScript reads as no time. */
const HEC_TIMES = ['1763700000', '1763700000.123', '1763700000.1235', '-0.0004', '-0.5', '0.0005', '1e9', '8.64e12', '"1763700000.5"', '"-12.25"', '"17"', 'null', '""'];
/** Pieces of messages for the kv parser (kv.ts): pairs of every form, and what is not a pair. */
const KV_PARTS = [
  'user=alice', 'action="log in"', "msg='single quoted'", 'note="say \\"hi\\" \\\\o/"', 'path="C:\\temp\\x"', "it='it\\'s'",
  '--level=warn', '=orphan', 'a==b', 'k=', 'k= v', 'x.y-z@w=1', '@host=kvhost', '@source=kvsrc', 'host=kvh', 'user=bob', 'ünï=1', 'name=名前',
  'e=🎉', 'q="unterminated', 'trail\\', 'status=200', '9key=no', '"a=b"', "k='a\\", 'a=b=c', 'level=info', 'a.b=dotted', 'type=t1', 'message2=m',
  'tab=\tx', 'x=1\ny=2', 'u=\u2028z', 'quote="a\\\\"b', 'w="🎉\\"x"',
];
/** Timestamps the kv parser takes (a zone, within 128 UTF-16 units, not glued to digits) and ones it does not. */
const KV_TIMES = [
  '2024-03-05T14:22:01.123+01:00', '[2026-11-21 10:00:00Z]', '2026-11-21T10:00Z', '12026-01-01T00:00:00Z', '2026-02-30T00:00:00Z',
  '2026-11-21T10:00:00+0530', '2026-11-21T10:00:00-09', '2026-11-21T10:00:00+19:00', '2026-11-21T10:00:00', 'x2026-11-21T10:00:00Z',
  '2026-11-21T10:00:00Z1', '2026-11-21t10:00:00,5z', '2024-02-29T23:59:59.999999999-00:00', '2026-11-21T10:00:00+05:3',
];
/** A bulk document's type, which names its message's parser (absent: kv; one #type per request natively). */
const BULK_TYPES = ['"none"', 'absent', '"kv"', '"app"', '""', '"json"', '5'];
const ISO = ['"2026-11-21T10:00:00Z"', '"2026-11-21T10:00:00.123Z"', '"2024-02-29T23:59:59,999999999+01:00"', '"2026-11-21 10:00-0930"', '1763700000000', '1.5', '-0.5', 'null'];

class Writer {
  constructor(readonly r: () => number) {}
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.r() * list.length)]!;
  }
  sp(): string {
    const x = this.r();
    return x < 0.8 ? '' : x < 0.9 ? ' ' : x < 0.95 ? '\t' : '\r';
  }
  str(s: string): string {
    if (this.r() < 0.7) return JSON.stringify(s);
    let out = '"';
    for (const ch of s) {
      if (this.r() < 0.5 && ch !== '"' && ch !== '\\' && ch.codePointAt(0)! > 0x1f) {
        for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
      } else out += JSON.stringify(ch).slice(1, -1);
    }
    return `${out}"`;
  }
  obj(members: [string, string][]): string {
    return `{${this.sp()}${members.map(([k, v]) => `${this.str(k)}${this.sp()}:${this.sp()}${v}`).join(`,${this.sp()}`)}${this.sp()}}`;
  }
  /** A message for the kv parser: maybe a timestamp (maybe after a prefix), then pieces. */
  kvMessage(): string {
    const parts: string[] = [];
    if (this.r() < 0.5) {
      const x = this.r();
      const prefix = x < 0.15 ? '🎉'.repeat(Math.floor(this.r() * 70)) : x < 0.3 ? 'x '.repeat(Math.floor(this.r() * 70)) : x < 0.4 ? 'grüße ' : '';
      parts.push(prefix + this.pick(KV_TIMES));
    }
    for (let i = Math.floor(this.r() * 6); i > 0; i--) parts.push(this.r() < 0.75 ? this.pick(KV_PARTS) : this.pick(WORDS));
    return parts.join(this.pick([' ', '  ', '\t', '', ' | ']));
  }
  /** A value for a flattened member: nested objects and arrays, numbers, literals, strings. */
  value(depth: number): string {
    const x = this.r();
    if (depth < 3 && x < 0.12) return this.object(depth + 1);
    if (depth < 3 && x < 0.2) return `[${Array.from({ length: Math.floor(this.r() * 3) }, () => this.value(depth + 1)).join(',')}]`;
    if (x < 0.35) return this.pick(NUMBERS);
    if (x < 0.4) return this.r() < 0.5 ? 'true' : 'false';
    if (x < 0.45) return 'null';
    return this.str(this.pick(WORDS));
  }
  object(depth: number): string {
    const keys = new Set<string>();
    for (let i = Math.floor(this.r() * 5); i > 0; i--) keys.add(this.pick(KEYS));
    return this.obj([...keys].map((k) => [k, this.value(depth)]));
  }
  /** Members in a random order. */
  shuffle<T>(list: T[]): T[] {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(this.r() * (i + 1));
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    return list;
  }
}

/**
 * One HEC event; `sourcetype` is the body's (a JSON value, or 'absent'): any for object events,
 * which are never parsed; for string events it picks the parser (with the token's).
 */
function hecEvent(w: Writer, objectEvent: boolean, sourcetype = '"none"'): string {
  const m: [string, string][] = [['event', objectEvent ? w.object(1) : w.str(w.r() < 0.6 ? w.kvMessage() : w.pick(WORDS))]];
  if (w.r() < 0.7) m.push(['time', w.pick(HEC_TIMES)]);
  if (w.r() < 0.6) m.push(['host', w.r() < 0.9 ? w.str(w.pick(['web-01', 'grüße', ''])) : 'null']);
  if (w.r() < 0.5) m.push(['source', w.str(w.pick(['/var/log/a', 'x"y']))]);
  if (sourcetype !== 'absent') m.push(['sourcetype', sourcetype]);
  if (w.r() < 0.3) m.push(['index', w.pick(['"repo1"', '""', 'null'])]);
  if (w.r() < 0.1) m.push(['timezone', 'null']);
  if (w.r() < 0.2) m.push(['other', w.value(1)]);
  if (w.r() < 0.7) {
    const keys = new Set<string>();
    for (let i = Math.floor(w.r() * 5); i > 0; i--) keys.add(w.pick([...KEYS, '', 'user', 'level', 'status']));
    m.push(['fields', w.r() < 0.1 ? 'null' : w.obj([...keys].map((k) => [k, w.pick([w.str(w.pick(WORDS)), w.pick(NUMBERS), 'true', 'false', 'null'])]))]);
  }
  return w.obj(w.shuffle(m));
}

/** One action and document; `type` is the document's type member (a JSON value, or 'absent'). */
function bulkPair(w: Writer, type = w.pick(BULK_TYPES)): string {
  const meta: [string, string][] = [];
  if (w.r() < 0.3) meta.push(['_index', w.pick(['"logs"', '"grüße"', 'null', '"q\\"x"'])]);
  if (w.r() < 0.3) meta.push(['_id', w.pick(['"a1"', '"id-🎉"', 'null', '7'])]);
  if (w.r() < 0.2) meta.push(['routing', 'null']);
  const action = w.obj([[w.r() < 0.5 ? 'index' : 'create', w.r() < 0.1 ? 'null' : w.obj(w.shuffle(meta))]]);
  const doc: [string, string][] = [['message', w.str(w.r() < 0.6 ? w.kvMessage() : w.pick(WORDS))]];
  if (type !== 'absent') doc.push(['type', type]);
  if (w.r() < 0.8) doc.push(['@timestamp', w.pick(ISO)]);
  const x = w.r();
  if (x < 0.2) doc.push(['host', w.obj([['name', w.str(w.pick(['h1', 'grüße']))], ['ip', '"10.0.0.1"']])]);
  else if (x < 0.3) doc.push(['host', w.str('h2')]);
  else if (x < 0.35) doc.push(['host', w.obj([['name', '5']])]);
  if (w.r() < 0.2) doc.push(['beat', w.obj([['hostname', w.str('beat-host')]])]);
  if (w.r() < 0.2) doc.push(['log', w.obj([['file', w.obj([['path', w.str('/var/log/x.log')]])], ['offset', '12']])]);
  if (w.r() < 0.2) doc.push(['source', w.r() < 0.8 ? w.str('src') : '3']);
  if (w.r() < 0.1) doc.push(['@host', w.r() < 0.5 ? w.str('own') : 'null']);
  if (w.r() < 0.1) doc.push(['', w.value(1)]);
  const keys = new Set<string>();
  for (let i = Math.floor(w.r() * 5); i > 0; i--) keys.add(w.pick([...KEYS.filter((k) => !k.startsWith('@')), 'user', 'level', 'status']));
  for (const k of keys) doc.push([k, w.value(1)]);
  return `${action}\n${w.obj(w.shuffle(doc))}\n`;
}

if (nativeStructuredUnavailable !== null) {
  t.equal(process.env.LOGSVC_NATIVE, 'off', `the native parser is missing: ${nativeStructuredUnavailable}`);
  t.end();
} else {
  t.test('HEC: random bodies give the same record bytes as JavaScript', async (t) => {
    const r = rnd(20);
    let taken = 0;
    let objects = 0;
    let parsed = 0;
    const N = 600;
    for (let k = 0; k < N; k++) {
      const w = new Writer(r);
      const objectEvents = r() < 0.3;
      // Object events are not parsed: any token parser or sourcetype goes (one per body). A string
      // event's parser is the token's, else its sourcetype's, else kv; none and kv are taken.
      const parser = w.pick([null, null, null, 'none', 'kv', 'app', 'json']);
      const sourcetype = w.pick(['"none"', '"app"', '"kv"', '"default"', 'null', 'absent', 'absent', '"accesslog"']);
      const n = 1 + Math.floor(r() * 6);
      const body = Buffer.from(Array.from({ length: n }, () => hecEvent(w, objectEvents, sourcetype)).join(w.pick(['', '\n', ' ', '\r\n\t'])));
      const nat = natively(HEC_P, body, parser);
      if (nat === null) continue;
      taken++;
      if (objectEvents) objects++;
      else if (parser === 'kv' || parser === 'app' || (parser === null && sourcetype !== '"none"')) parsed++;
      const js = inJs(HEC_P, body, parser);
      if (!same(nat, js)) {
        t.fail(shown(`body ${k} differs: ${body.toString().slice(0, 600)}\nJS: ${typeof js === 'string' ? js : js.payload.toString('latin1').slice(0, 300)}\nnative: ${typeof nat === 'string' ? nat : nat.payload.toString('latin1').slice(0, 300)}`));
        return;
      }
    }
    t.ok(taken > N / 3, `the native parser took ${taken} of ${N} bodies`);
    t.ok(objects > 10, `${objects} with object events`);
    t.ok(parsed > N / 5, `${parsed} of them with string events through kv`);
  });

  t.test('bulk: random bodies give the same record bytes and answer items as JavaScript', async (t) => {
    const r = rnd(21);
    let taken = 0;
    const N = 600;
    for (let k = 0; k < N; k++) {
      const w = new Writer(r);
      const parser = w.pick([null, null, null, null, 'none', 'kv', 'app']);
      const p: BulkParams = r() < 0.2 ? { door: 'elastic-bulk', index: 'from-path' } : BULK_P;
      const type = w.pick(BULK_TYPES);
      const body = Buffer.from(Array.from({ length: 1 + Math.floor(r() * 6) }, () => bulkPair(w, r() < 0.95 ? type : w.pick(BULK_TYPES))).join(''));
      const nat = natively(p, body, parser);
      if (nat === null) continue;
      taken++;
      const js = inJs(p, body, parser);
      if (!same(nat, js)) {
        const show = (o: Out): unknown => (typeof o === 'string' ? o : { items: o.items, payload: o.payload.toString('latin1').slice(0, 400) });
        t.fail(shown(`body ${k} differs: ${JSON.stringify({ body: body.toString().slice(0, 800), js: show(js), native: show(nat) })}`));
        return;
      }
    }
    t.ok(taken > N / 3, `the native parser took ${taken} of ${N} bodies`);
  });

  t.test('what the native parser leaves to JavaScript', async (t) => {
    const hec = (s: string, parser: string | null = null): void => {
      t.equal(natively(HEC_P, Buffer.from(s), parser), null, `HEC declined: ${s}`);
    };
    hec('');
    hec('  \n');
    hec('{"event":"x","sourcetype":"accesslog"}'); // a built-in parser other than kv and none
    hec('{"event":"x"}', 'json');
    hec('{"event":"x","sourcetype":"syslog"}');
    hec('{"event":"a=1 __proto__=2"}'); // JavaScript keeps it as an own field: left to it
    hec('{"event":"x","sourcetype":"none"} junk');
    hec('{"event":null,"sourcetype":"none"}');
    hec('{"event":5,"sourcetype":"none"}');
    hec('{"sourcetype":"none"}');
    hec('{"event":"x","sourcetype":"none","index":"other"}');
    hec('{"event":"x","sourcetype":"none","time":"soon"}');
    hec('{"event":"x","sourcetype":"none","time":" 12"}');
    hec('{"event":"x","sourcetype":"none","time":9e12}');
    hec('{"event":"x","sourcetype":"none","timezone":"UTC"}');
    hec('{"event":"x","sourcetype":"none","host":5}');
    hec('{"event":"x","sourcetype":"none","fields":{"#env":"prod"}}');
    hec('{"event":"x","sourcetype":"none","fields":{"a":[1]}}');
    hec('{"event":"x","sourcetype":"none","fields":{"a":{"b":1}}}');
    hec('{"event":"x","sourcetype":"none","fields":{"7":"x"}}');
    hec('{"event":"x","sourcetype":"none","fields":{"a":"1","a":"2"}}');
    hec('{"event":"x","sourcetype":"none","event":"y"}');
    hec('{"event":{"a":1},"sourcetype":"s1"}{"event":{"a":1},"sourcetype":"s2"}'); // two datasources
    hec('{"event":{"a":{"b":1},"a":2},"sourcetype":"none"}');
    hec('{"event":"\\ud800","sourcetype":"none"}');
    hec(`${'{"event":"x","sourcetype":"none"}'.repeat(LIMITS.maxEventsPerRequest + 1)}`);
    const bulk = (s: string, parser: string | null = null): void => {
      t.equal(natively(BULK_P, Buffer.from(s), parser), null, `bulk declined: ${s}`);
    };
    bulk('');
    bulk('{"index":{}}\n{"message":"x","type":"json"}\n');
    bulk('{"index":{}}\n{"message":"x"}\n', 'accesslog');
    bulk('{"index":{}}\n{"message":"a=1 __proto__=2"}\n');
    bulk('{"index":{}}\n{"type":"none"}\n'); // no message: the document's line is the raw string
    bulk('{"index":{}}\n{"message":5,"type":"none"}\n');
    bulk('{"delete":{"_id":"1"}}\n');
    bulk('{"update":{"_id":"1"}}\n{"doc":{}}\n');
    bulk('{"index":{}}\n');
    bulk('{"index":{},"create":{}}\n{"message":"x","type":"none"}\n');
    bulk('{"index":{}}\n{"message":"x",\n"type":"none"}\n');
    bulk('{"index":{}}\n[1]\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","@timestamp":"2026-11-21T10:00:00"}\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","@timestamp":true}\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","@tags":["a"]}\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","host.name":"h"}\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","log":{"file.path":"p"}}\n');
    bulk('{"index":{"_id":"a","_id":"b"}}\n{"message":"x","type":"none"}\n');
    bulk('{"index":{}}\n{"message":"x","type":"none","message":"y"}\n');
    bulk(`${'{"index":{}}\n{"message":"x","type":"none"}\n'.repeat(LIMITS.maxEventsPerRequest + 1)}`);
  });

  t.test('events over the field or size limits are left to JavaScript, which marks them', async (t) => {
    const small: IngestLimits = { ...LIMITS, maxFieldsPerEvent: 3, maxEventBytes: 100 };
    const fields = '{"event":"x","sourcetype":"none","fields":{"a":"1","b":"2","c":"3","d":"4"}}';
    t.equal(natively(HEC_P, Buffer.from(fields), null, small), null);
    t.type(inJs(HEC_P, Buffer.from(fields), null, small), 'object');
    const big = `{"index":{}}\n{"message":"${'x'.repeat(200)}","type":"none"}\n`;
    t.equal(natively(BULK_P, Buffer.from(big), null, small), null);
    t.type(inJs(BULK_P, Buffer.from(big), null, small), 'object');
  });

  t.test('a damaged body never crashes it: declined, or the same bytes as JavaScript', async (t) => {
    const r = rnd(22);
    for (let k = 0; k < 300; k++) {
      const w = new Writer(r);
      const hec = k % 2 === 0;
      const b = Buffer.from(hec ? Array.from({ length: 3 }, () => hecEvent(w, r() < 0.3)).join('') : bulkPair(w) + bulkPair(w));
      const at = Math.floor(r() * b.length);
      const damaged = k % 3 === 0 ? b.subarray(0, at) : Buffer.from(b);
      if (k % 3 !== 0) damaged[at] = Math.floor(r() * 256);
      const p = hec ? HEC_P : BULK_P;
      const nat = natively(p, damaged, null);
      if (nat === null) continue;
      const js = inJs(p, damaged, null);
      if (!same(nat, js)) {
        t.fail(shown(`damage at ${at} of ${damaged.toString('latin1')}: native took it, JavaScript ${typeof js === 'string' ? `refuses (${js})` : 'reads otherwise'}`));
        return;
      }
    }
    t.pass('no damaged body crashed the parser or was read otherwise');
  });
}
