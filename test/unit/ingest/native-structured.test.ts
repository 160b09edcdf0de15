/**
 * The native structured-ingest parser (native/structured_ingest.cc) against the JavaScript path
 * (JSON.parse, normalizeStructured, prepareRecord): wherever it takes a body it must make the same
 * record bytes, over seeded random bodies that reach every part of the format it takes (escapes,
 * non-ASCII and astral text, numbers of every form, nesting, arrays, nulls, nameless members,
 * names that collide, members it passes over, whitespace); it must decline everything it leaves to
 * JavaScript (so that JavaScript reports every error and handles every rare rule); and it must
 * never crash on a damaged body (declining it or agreeing with JavaScript).
 */
import t from 'tap';
import type { Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { prepareRecord, prepareStructuredNatively, runIngestTask } from '../../../src/ingest/pipeline.js';
import { nativeStructuredUnavailable } from '../../../src/ingest/native-structured.js';
import { normalizeStructured } from '../../../src/ingest/structured.js';
import { parseJsonBounded } from '../../../src/lib/json.js';
import type { IngestLimits } from '../../../src/ingest/limits.js';
import { rnd } from '../../helpers/random.js';

const LIMITS: IngestLimits = { maxEventsPerRequest: 2000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 200, maxJsonDepth: 24 };
const AT = 1_763_700_000_000;

/** The JavaScript path's record bytes, or its error. */
function inJs(body: Buffer, limits = LIMITS): Buffer | string {
  try {
    const parsed = parseJsonBounded(body.toString('utf8'), limits.maxJsonDepth, 'structured ingest body');
    return prepareRecord('repo1', normalizeStructured(parsed, AT, limits, null), AT).payload;
  } catch (err) {
    return (err as Error).message;
  }
}

function natively(body: Buffer, limits = LIMITS): Buffer | null {
  return prepareStructuredNatively(body, 'repo1', AT, limits)?.payload ?? null;
}

if (nativeStructuredUnavailable !== null) {
  // Built by `npm run build` on any machine with a C++ compiler; only LOGSVC_NATIVE=off turns it off.
  t.equal(process.env.LOGSVC_NATIVE, 'off', `the native structured parser is missing: ${nativeStructuredUnavailable}`);
  t.end();
} else {
  const WORDS = ['alpha', 'GET /index.html', '', 'a b', 'x=1', 'grüße', 'ΣΊΣΥΦΟΣ', '🎉party', '日本語', 'İ', 'tab\there', 'quote"d', 'back\\slash', 'new\nline', '\u0001ctl', 'ünïcödé'];
  const KEYS = ['host', 'level', 'message', 'a.b', 'user', 'Ωmega', '名前', '🎉', '__proto__', 'x-y', 'status code', 'a', 'b', '01', '4294967295', '-1', '1.5'];
  /** Number literals as they appear in JSON, with the forms that format differently. */
  const NUMBER_LITERALS = ['0', '-0', '7', '-42', '123456789012345', '1234567890123456', '12345678901234567890', '1e21', '1e20', '1E+2', '1.5', '-0.000001', '0.0000001', '1e-7', '2.5e-3', '3.14159', '100.0', '1.0e0', '5e-324', '1.7976931348623157e308', '0.1', '123e-20', '9007199254740993', '4.35', '-1e-10', '6.02214076e23'];

  /** Timestamps of other forms, all within range: numbers, and ISO 8601 strings JavaScript takes. */
  const TIMESTAMPS = [
    '0', '-0', '1.5', '-0.5', '1e3', '1763700000000.9', '-8.64e15', '8.64E+15',
    '"2026-11-21T10:00:00Z"', '"2026-11-21T10:00:00.123Z"', '"2026-11-21t10:00:00.1234567z"', '"2026-11-21 10:00Z"',
    '"2024-02-29T23:59:59,999999999+01:00"', '"0000-01-01T00:00:00-18:00"', '"9999-12-31T23:59:59+1800"', '"1969-12-31T23:59:59.5-00:00"',
    '"2026-03-01T00:00:00+05"', '"2000-02-29T12:00:00-0930"', '"2026-11-21T10:00:00\\u002B02:00"',
  ];
  /** ISO strings JavaScript refuses (so the native parser must decline them). */
  const BAD_ISO = ['"2026-11-21T10:00:00"', '"2023-02-29T00:00:00Z"', '"2026-11-21T24:00:00Z"', '"2026-11-21T10:00:00+18:01"', '"2026-11-21T10:00:00.Z"', '"2026-11-21T10:00:00.1234567890Z"', '"2026-11-21T10:00:00Zx"', '"2026-11-21T10:00:00+01:0"', '"2026-1-21T10:00:00Z"', '"２026-11-21T10:00:00Z"', '""'];

  /** Writes JSON with random spacing and with some strings as \u escapes, so both readers see every form. */
  class Writer {
    constructor(private readonly r: () => number) {}
    sp(): string {
      const x = this.r();
      return x < 0.8 ? '' : x < 0.9 ? ' ' : x < 0.95 ? '\n  ' : '\t\r\n';
    }
    str(s: string): string {
      const plain = JSON.stringify(s);
      if (this.r() < 0.7) return plain;
      // Escape some characters as \uXXXX (astral ones as pairs) and "/" as "\/".
      let out = '"';
      for (const ch of s) {
        const cp = ch.codePointAt(0)!;
        if (this.r() < 0.5 && cp > 0x1f && ch !== '"' && ch !== '\\') {
          if (ch === '/') out += '\\/';
          else for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
        } else {
          out += JSON.stringify(ch).slice(1, -1);
        }
      }
      return `${out}"`;
    }
    num(): string {
      const x = this.r();
      if (x < 0.4) return NUMBER_LITERALS[Math.floor(this.r() * NUMBER_LITERALS.length)]!;
      if (x < 0.7) return String(Math.floor(this.r() * 1e6) - 5e5);
      // A random double from random bits (finite), written as JavaScript would or in exponent form.
      const buf = Buffer.alloc(8);
      for (let i = 0; i < 8; i++) buf[i] = Math.floor(this.r() * 256);
      let v = buf.readDoubleLE(0);
      if (!Number.isFinite(v)) v = 1 / 3;
      return this.r() < 0.5 ? String(v) : v.toExponential();
    }
    key(): string {
      return this.str(KEYS[Math.floor(this.r() * KEYS.length)]!);
    }
  }

  interface Reached {
    escapes: boolean;
    astral: boolean;
    numbers: Set<string>;
    nested: boolean;
    arrays: boolean;
    nulls: boolean;
    nameless: boolean;
    passedOver: boolean;
  }

  /** A random attribute value; keys within an object are distinct (repeats are declined, tested below). */
  function value(w: Writer, r: () => number, depth: number, reached: Reached): string {
    const x = r();
    if (depth < 3 && x < 0.15) {
      reached.nested = true;
      return object(w, r, depth + 1, reached);
    }
    if (depth < 3 && x < 0.25) {
      reached.arrays = true;
      const n = Math.floor(r() * 4);
      return `[${w.sp()}${Array.from({ length: n }, () => value(w, r, depth + 1, reached)).join(`,${w.sp()}`)}${w.sp()}]`;
    }
    if (x < 0.35) {
      const lit = w.num();
      reached.numbers.add(lit);
      return lit;
    }
    if (x < 0.4) return r() < 0.5 ? 'true' : 'false';
    if (x < 0.45) {
      reached.nulls = true;
      return 'null';
    }
    const s = WORDS[Math.floor(r() * WORDS.length)]!;
    const text = w.str(s);
    if (text.includes('\\u')) reached.escapes = true;
    if (/[\u{10000}-\u{10ffff}]/u.test(s)) reached.astral = true;
    return text;
  }

  function object(w: Writer, r: () => number, depth: number, reached: Reached): string {
    const n = Math.floor(r() * 6);
    const keys = new Set<string>();
    const members: string[] = [];
    for (let i = 0; i < n; i++) {
      let k = KEYS[Math.floor(r() * KEYS.length)]!;
      if (r() < 0.05) {
        k = '';
        reached.nameless = true;
      }
      // KEYS holds no array index ("01", "-1" and "4294967295" are none): those are declined.
      if (keys.has(k)) continue;
      keys.add(k);
      members.push(`${w.sp()}${w.str(k)}${w.sp()}:${w.sp()}${value(w, r, depth, reached)}`);
    }
    return `{${members.join(',')}${w.sp()}}`;
  }

  function body(seed: number, reached: Reached): Buffer {
    const r = rnd(seed);
    const w = new Writer(r);
    const items: string[] = [];
    const nItems = 1 + Math.floor(r() * 3);
    for (let i = 0; i < nItems; i++) {
      const events: string[] = [];
      const nEvents = Math.floor(r() * 30);
      for (let j = 0; j < nEvents; j++) {
        const members = [`"timestamp":${w.sp()}${r() < 0.8 ? String(Math.floor(r() * 4e12) - 2e12) : TIMESTAMPS[Math.floor(r() * TIMESTAMPS.length)]!}`, `"rawstring":${w.sp()}${w.str(`${WORDS[j % WORDS.length]!} line ${j}`)}`];
        if (r() < 0.9) members.push(`"attributes":${w.sp()}${r() < 0.05 ? 'null' : object(w, r, 0, reached)}`);
        if (r() < 0.1) members.push('"timezone":null');
        if (r() < 0.1) {
          members.push(`"other":${w.sp()}{"x":[1,{"y":"\\ud800"}],"t":"\\u00e9\\u20ac\\ud83d\\ude00"}`);
          reached.passedOver = true;
        }
        members.sort(() => r() - 0.5);
        events.push(`{${w.sp()}${members.join(`,${w.sp()}`)}${w.sp()}}`);
      }
      const tags = `{"host":${JSON.stringify(`web-${i}-${seed % 5}`)}${r() < 0.3 ? ',"#env":"prod"' : ''}}`;
      const item = r() < 0.5 ? `{"tags":${tags},"events":[${events.join(',')}]}` : `{"events":[${events.join(`,${w.sp()}`)}],${w.sp()}"extra":[1,2],"tags":${w.sp()}${tags}}`;
      items.push(item);
    }
    return Buffer.from(`${w.sp()}[${items.join(`,${w.sp()}`)}]${w.sp()}`, 'utf8');
  }

  /** Bodies 1..cases that the native parser takes must give the JavaScript path's bytes: how many it took. */
  function sameAsJs(t: Test, cases: number, make: (seed: number) => Buffer): number {
    let taken = 0;
    let differ = 0;
    for (let seed = 1; seed <= cases; seed++) {
      const b = make(seed);
      const js = inJs(b);
      const nat = natively(b);
      if (nat === null) continue;
      taken++;
      if (!(js instanceof Buffer) || !js.equals(nat)) {
        differ++;
        if (differ <= 3) t.fail(`seed ${seed}: native and JavaScript records differ (${typeof js === 'string' ? js : 'bytes'})`);
      }
    }
    t.equal(differ, 0, 'no body gives different bytes');
    return taken;
  }

  t.test('random bodies: the same record bytes as the JavaScript path', async (t) => {
    const reached: Reached = { escapes: false, astral: false, numbers: new Set(), nested: false, arrays: false, nulls: false, nameless: false, passedOver: false };
    const CASES = 400;
    const taken = sameAsJs(t, CASES, (seed) => body(seed, reached));
    // Bodies repeat no key and keep every limit, so only items with the same tags are declined.
    t.ok(taken >= CASES * 0.7, `the native parser takes most bodies (${taken} of ${CASES})`);
    t.ok(reached.escapes && reached.astral && reached.nested && reached.arrays && reached.nulls && reached.nameless && reached.passedOver, 'the bodies reach every part of the format');
    for (const lit of NUMBER_LITERALS) t.ok(reached.numbers.has(lit), `number literal ${lit} reached`);
  });

  // A name is first compared with the one that followed the previous name last time (Item::next):
  // events of a few shapes, interleaved, some with a member left out, moved, or named as another
  // shape names a different column ("a.b" flattened from {"a":{"b"}} or written as it is).
  t.test('interleaved shapes, some perturbed: the same record bytes as the JavaScript path', async (t) => {
    const SHAPES = [
      ['level', 'service', 'trace.id', 'trace.span', 'message', 'user.id', 'user.geo.country', 'http.status'],
      ['level', 'service', 'trace.id', 'message', 'db.statement', 'db.rows', 'duration'],
      ['level', 'host', 'message', 'a.b', 'a', 'http.status'],
    ];
    /** Nested JSON for dotted names (two names with one prefix share their object). */
    const nest = (names: string[], r: () => number): string => {
      const tree: Record<string, unknown> = {};
      for (const n of names) {
        // Written flat where an object on the way is already a value ("a" before "a.b").
        const split = n.split('.');
        const parts = r() < 0.2 || split.slice(0, -1).some((_, k) => typeof tree[split[k]!] !== 'object' && tree[split[k]!] !== undefined) ? [n] : split;
        let o = tree;
        for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
        if (o[parts.at(-1)!] === undefined) o[parts.at(-1)!] = r() < 0.3 ? Math.floor(r() * 1000) : `v${Math.floor(r() * 50)}`;
      }
      return JSON.stringify(tree);
    };
    const taken = sameAsJs(t, 40, (seed) => {
      const r = rnd(1000 + seed);
      const events = Array.from({ length: 60 }, (_, i) => {
        const names = [...SHAPES[Math.floor(r() * SHAPES.length)]!];
        const x = r();
        if (x < 0.1) names.splice(Math.floor(r() * names.length), 1);
        else if (x < 0.2) names.push(names.splice(Math.floor(r() * names.length), 1)[0]!);
        return `{"timestamp":${1_700_000_000_000 + i},"rawstring":"line ${i}","attributes":${nest(names, r)}}`;
      });
      return Buffer.from(`[{"tags":{"host":"h"},"events":[${events.join(',')}]}]`);
    });
    t.equal(taken, 40, 'the native parser takes every body');
  });

  t.test('numbers are String(number), whatever their form', async (t) => {
    const r = rnd(99);
    const w = new Writer(r);
    const lits = [...NUMBER_LITERALS, ...Array.from({ length: 3000 }, () => w.num())];
    const events = lits.map((lit, i) => `{"timestamp":${i},"rawstring":"r","attributes":{"v":${lit}}}`);
    const b = Buffer.from(`[{"tags":{"h":"x"},"events":[${events.join(',')}]}]`);
    const nat = natively(b, { ...LIMITS, maxEventsPerRequest: 10_000 });
    t.ok(nat !== null, 'taken');
    t.ok(nat!.equals(inJs(b, { ...LIMITS, maxEventsPerRequest: 10_000 }) as Buffer), 'the same bytes for every number');
  });

  const ev = (members: string): string => `{"timestamp":1,"rawstring":"r",${members}}`;
  const one = (event: string, tags = '{"h":"x"}'): string => `[{"tags":${tags},"events":[${event}]}]`;

  const DECLINED: [string, string][] = [
    ['a body that is not an array', '{"tags":{"h":"x"},"events":[]}'],
    ['an empty body', ''],
    ['a byte-order mark', '\ufeff[]'],
    ['trailing text', '[] x'],
    ['a trailing comma', one(ev('"attributes":{"a":1,}'))],
    ['a leading zero', one(ev('"attributes":{"a":01}'))],
    ['a number beyond a double', one(ev('"attributes":{"a":1e400}'))],
    ['a bad escape', one(ev('"attributes":{"a":"\\x41"}'))],
    ['a raw control character', one(ev('"attributes":{"a":"a\u0001b"}'))],
    ['a lone surrogate', one(ev('"attributes":{"a":"\\ud800"}'))],
    ['a lone low surrogate', one(ev('"attributes":{"a":"\\udc00x"}'))],
    ['an item that is not an object', '[1]'],
    ['an item without events', '[{"tags":{"h":"x"}}]'],
    ['events that are not an array', '[{"tags":{"h":"x"},"events":{}}]'],
    ['an item without tags', '[{"events":[]}]'],
    ['empty tags', one(ev('"attributes":{}'), '{}')],
    ['tags that are not an object', one(ev('"attributes":{}'), '"h"')],
    ['an invalid tag', one(ev('"attributes":{}'), '{"repo":"x"}')],
    ['tags that repeat', '[{"tags":{"h":"x"},"tags":{"h":"y"},"events":[]}]'],
    ['two items with the same tags', `[{"tags":{"h":"x"},"events":[${ev('"attributes":{}')}]},{"tags":{"#h":"x"},"events":[${ev('"attributes":{}')}]}]`],
    ['an event that is not an object', one('"e"')],
    ...BAD_ISO.map((ts): [string, string] => [`an ISO timestamp JavaScript refuses: ${ts}`, one(`{"timestamp":${ts},"rawstring":"r"}`)]),
    ['no timestamp', one('{"rawstring":"r"}')],
    ['a timestamp out of range', one('{"timestamp":8.65e15,"rawstring":"r"}')],
    ['a time zone with a numeric timestamp', one('{"timestamp":1,"timezone":"Europe/Oslo","rawstring":"r"}')],
    ['no rawstring', one('{"timestamp":1,"attributes":{"a":1}}')],
    ['a null rawstring', one('{"timestamp":1,"rawstring":null}')],
    ['a rawstring that is not a string', one('{"timestamp":1,"rawstring":5}')],
    ['attributes that are an array', one(ev('"attributes":[1]'))],
    ['attributes that repeat', one(ev('"attributes":{"a":1},"attributes":{"b":2}'))],
    ['a repeated attribute key', one(ev('"attributes":{"a":{"x":1},"a":null}'))],
    ['a repeated nested key', one(ev('"attributes":{"o":{"k":1,"k":2}}'))],
    ['a key repeated in another spelling', one(ev('"attributes":{"a":{"x":1},"\\u0061":2}'))],
    ['an attribute key with a quote (the names are JSON in a section)', one(ev('"attributes":{"a\\"b":1}'))],
    ['an attribute key with a control character', one(ev('"attributes":{"a\\nb":1}'))],
    ['an array-index key', one(ev('"attributes":{"b":1,"0":2}'))],
    ['nesting past the limit', one(ev(`"attributes":${'{"a":'.repeat(30)}1${'}'.repeat(30)}`))],
    ['too many fields', one(ev(`"attributes":{${Array.from({ length: 201 }, (_, i) => `"f${i}":1`).join(',')}}`))],
    ['an event over the size limit', one(`{"timestamp":1,"rawstring":"${'x'.repeat((1 << 20) + 1)}"}`)],
    ['too many events', `[{"tags":{"h":"x"},"events":[${Array.from({ length: 2001 }, () => ev('"attributes":{}')).join(',')}]}]`],
    ['invalid UTF-8 in a rawstring', ''],
    ['more items than the event limit', `[${Array.from({ length: 2001 }, () => '{"tags":{"h":"x"},"events":[]}').join(',')}]`],
  ];

  t.test('it declines what it leaves to JavaScript', async (t) => {
    for (const [what, text] of DECLINED) {
      const b = what.startsWith('invalid UTF-8') ? Buffer.concat([Buffer.from('[{"tags":{"h":"x"},"events":[{"timestamp":1,"rawstring":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}]')]) : Buffer.from(text, 'utf8');
      t.equal(natively(b), null, `declined: ${what}`);
    }
  });

  t.test('events x new field names past a section\'s bound: declined as soon as they pass it, and refused by JavaScript', async (t) => {
    const limits = { ...LIMITS, maxEventsPerRequest: 10_000 };
    const b = Buffer.from(one(Array.from({ length: 4100 }, (_, i) => ev(`"attributes":{"f${i}":1}`)).join(',')));
    t.equal(natively(b, limits), null);
    t.match(inJs(b, limits), /4100 events of one datasource have more than \d+ distinct field names/);
  });

  t.test('what JavaScript accepts near the declines, it takes and agrees with', async (t) => {
    const cases: [string, string][] = [
      ['an empty body array', '[]'],
      ['an item with no events', '[{"tags":{"h":"x"},"events":[]}]'],
      ['a null time zone', one('{"timestamp":1,"timezone":null,"rawstring":"r"}')],
      ['an ISO timestamp with a time zone JavaScript does not read', one('{"timezone":{"x":["Europe/Oslo"]},"timestamp":"2026-11-21T10:00:00+01:00","rawstring":"r"}')],
      ...TIMESTAMPS.filter((ts) => ts.startsWith('"')).map((ts): [string, string] => [`ISO timestamp ${ts}`, one(`{"timestamp":${ts},"rawstring":"r","attributes":{"a":1}}`)]),
      ['null attributes', one(ev('"attributes":null'))],
      ['a key of two zeros and a negative number key', one(ev('"attributes":{"00":1,"-1":2,"4294967295":3}'))],
      ['distinct keys that flatten to one name', one(ev('"attributes":{"a.b":1,"a":{"b":2},"c":[3],"c[0]":4}'))],
      ['a nameless member', one(ev('"attributes":{"":{"x":1,"":2},"y":{"":3}}'))],
      ['__proto__', one(ev('"attributes":{"__proto__":{"a":1},"b":"__proto__"}'))],
      ['a repeated member the parser passes over', one(ev('"x":1,"x":{"y":[]}'))],
      ['an escaped event key', one('{"\\u0074imestamp":5,"rawstring":"r"}')],
      ['escaped attribute keys', one(ev('"attributes":{"\\u0061":1,"\\u00e9t\\u00e9":{"\\ud83d\\ude00":2},"\\/":3,"b":{"c":"\\u0041"}}'))],
      ['field names at and past 4,096 units, ASCII and not (longer ones are left out)', one(ev(`"attributes":{"${'k'.repeat(4096)}":1,"${'k'.repeat(4097)}":2,"${'é'.repeat(4096)}":3,"${'é'.repeat(4097)}":4,"${'€'.repeat(4097)}":5,"${'🎉'.repeat(2048)}":6,"${'🎉'.repeat(2049)}":7}`))],
      ['a 2 MB key over 1,000 members (their names are left out)', one(ev(`"attributes":{"${'k'.repeat(2e6)}":{${Array.from({ length: 1000 }, (_, i) => `"f${i}":1`).join(',')}},"short":1}`))],
      ['exactly the field limit', one(ev(`"attributes":{${Array.from({ length: 200 }, (_, i) => `"f${i}":1`).join(',')}}`))],
      ['exactly the nesting limit', one(ev(`"attributes":${'{"a":'.repeat(19)}1${'}'.repeat(19)}`))],
      ['a negative fraction timestamp (-0)', one('{"timestamp":-0.5,"rawstring":"r"}')],
      ['an ASCII event whose units x 3 pass the size limit but whose bytes do not', one(`{"timestamp":1,"rawstring":"${'x'.repeat(400_000)}"}`)],
      ['non-ASCII at 3 bytes per unit, just under the size limit', one(`{"timestamp":1,"rawstring":"${'€'.repeat(349_525)}"}`)],
    ];
    for (const [what, text] of cases) {
      const b = Buffer.from(text, 'utf8');
      const js = inJs(b);
      t.ok(js instanceof Buffer, `JavaScript accepts ${what}`);
      const nat = natively(b);
      t.ok(nat !== null && nat.equals(js as Buffer), `native takes ${what}, with the same bytes`);
    }
  });

  t.test('a damaged body never crashes it: declined, or the same bytes as JavaScript', async (t) => {
    const good = body(7, { escapes: false, astral: false, numbers: new Set(), nested: false, arrays: false, nulls: false, nameless: false, passedOver: false });
    const r = rnd(5);
    let agreed = 0;
    let declined = 0;
    for (let k = 0; k < 600; k++) {
      const b = Buffer.from(good);
      const at = Math.floor(r() * b.length);
      // Every third a truncation (only trailing spaces can go and leave JSON), else a bit flip.
      const damaged = k % 3 === 0 ? b.subarray(0, at) : b;
      if (k % 3 !== 0) b[at] = b[at]! ^ (1 << Math.floor(r() * 8));
      const nat = natively(damaged);
      if (nat === null) {
        declined++;
        continue;
      }
      const js = inJs(damaged);
      if (js instanceof Buffer && js.equals(nat)) agreed++;
      else t.fail(`damage at ${at}: native took a body JavaScript ${typeof js === 'string' ? `refuses (${js})` : 'reads otherwise'}`);
    }
    t.ok(declined > 0 && agreed > 0, `some declined (${declined}), some still valid and agreed (${agreed})`);
  });

  t.test('runIngestTask takes structured bodies natively only without a parser', async (t) => {
    const b = Buffer.from(one(ev('"attributes":{"a":"1"}')));
    const task = { kind: 'structured' as const, body: b, contentEncoding: undefined, maxDecompressedBytes: 1 << 20, limits: LIMITS, repositoryId: 'repo1', at: AT };
    const plain = runIngestTask({ ...task, parser: null });
    t.ok(plain.ok && Buffer.from(plain.payload).equals(inJs(b) as Buffer), 'no parser: the native record');
    const kv = runIngestTask({ ...task, parser: 'kv' });
    t.ok(kv.ok && kv.summary.groups[0]!.tags.type === 'kv', 'a token parser: the JavaScript path (#type from the parser)');
    const bad = runIngestTask({ ...task, body: Buffer.from('[{"tags":{},"events":[]}]'), parser: null });
    t.same(bad, { ok: false, code: 'E_VALIDATION', message: '[0].tags: structured ingest needs at least one tag' }, 'errors come from the JavaScript path');
  });

  t.test('LOGSVC_NATIVE=off turns it off', async (t) => {
    const script = `import('${new URL('../../../src/ingest/native-structured.ts', import.meta.url).href}').then((m) => console.log(JSON.stringify(m.nativeStructuredUnavailable)))`;
    const r = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { env: { ...process.env, LOGSVC_NATIVE: 'off' }, encoding: 'utf8', timeout: 60_000 });
    t.equal(r.stdout.trim(), '"LOGSVC_NATIVE=off"', r.stderr);
  });
}
