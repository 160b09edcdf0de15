/**
 * One suite run against every built-in parser: the registry, the never-throw and field-limit
 * contracts, and linear time on hostile 1 MB lines.
 */
import t from 'tap';
import { BUILT_IN_PARSER_NAMES, builtInParser, isBuiltInParser, type BuiltInParser } from '../../../src/ingest/parsers/index.js';

t.test('registry', async (t) => {
  t.same([...BUILT_IN_PARSER_NAMES].sort(), ['accesslog', 'json', 'kv', 'none', 'syslog']);
  for (const name of BUILT_IN_PARSER_NAMES) {
    t.equal(builtInParser(name).name, name);
    t.equal(isBuiltInParser(name), true);
  }
  for (const name of ['default', 'nope', '', 'KV', null, undefined]) {
    t.equal(builtInParser(name).name, 'kv', `${String(name)} falls back to kv`);
  }
  t.equal(isBuiltInParser('default'), false);
  t.equal(isBuiltInParser('json-for-action'), false);
  t.equal(builtInParser('json'), builtInParser('json'), 'parsers are shared instances');
});

t.test('none keeps nothing', async (t) => {
  t.same(builtInParser('none').parse('2024-03-05T14:22:01Z a=1', 100), { timestamp: null, timezone: null, fields: {}, error: null });
});

/** A line each parser turns into at least three fields. */
const SAMPLE: Record<string, string> = {
  kv: '2024-03-05T14:22:01Z a=1 b=2 c=3',
  json: '{"a":1,"b":2,"c":3}',
  accesslog: '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.0" 200 2326',
  syslog: '<34>Oct 11 22:14:15 host app[1]: a=1',
  none: 'anything',
};

const parsers: BuiltInParser[] = BUILT_IN_PARSER_NAMES.map((n) => builtInParser(n));

t.test('every parser returns the ParseResult shape and honours maxFields', async (t) => {
  for (const p of parsers) {
    const sample = SAMPLE[p.name];
    if (sample === undefined) {
      t.fail(`no sample line for ${p.name}`);
      continue;
    }
    const full = p.parse(sample, 100);
    t.same(
      Object.keys(full)
        .filter((k) => k !== 'fieldsTruncated')
        .sort(),
      ['error', 'fields', 'timestamp', 'timezone'],
      p.name,
    );
    t.not(full.fieldsTruncated, true, `${p.name} keeps every field of its sample under a limit of 100`);
    t.equal(full.error, null, `${p.name} parses its sample`);
    if (p.name !== 'none') t.ok(Object.keys(full.fields).length >= 3, `${p.name} sample yields fields`);
    for (const max of [0, 1, 2]) {
      const r = p.parse(sample, max);
      t.ok(Object.keys(r.fields).length <= max, `${p.name} keeps at most ${max} fields`);
      if (p.name !== 'none' && p.name !== 'json') t.equal(r.fieldsTruncated, true, `${p.name} says it dropped fields at maxFields ${max}`);
      t.equal(r.timestamp, full.timestamp, `${p.name} still reads the timestamp with maxFields ${max}`);
    }
    if (full.timestamp !== null) t.type(full.timezone, 'string', `${p.name} gives a zone with its timestamp`);
  }
});

const ODD_INPUTS = [
  '',
  '\n',
  '\r\n\t ',
  '\u0000\u0001',
  '\ud800 lone surrogate a=\udfff',
  '=',
  '"',
  '<',
  '<1>',
  '<1>1',
  '<1>1 ',
  '[',
  '{',
  '}',
  'a="\\',
  '2024-03-05T14:22:01Z',
  '{"__proto__":{"x":1},"constructor":"c","toString":1}',
  '__proto__=1 constructor=2',
  '- - - [',
  '<13>1 - - - - - [a',
];

t.test('no parser throws, and errors are one line', async (t) => {
  for (const p of parsers) {
    for (const line of ODD_INPUTS) {
      let r;
      try {
        r = p.parse(line, 10);
      } catch (err) {
        t.fail(`${p.name} threw on ${JSON.stringify(line)}: ${String(err)}`);
        continue;
      }
      if (r.error !== null) t.notOk(/[\r\n]/.test(r.error), `${p.name} error is one line`);
      t.equal(Object.getPrototypeOf(r.fields), Object.prototype, `${p.name} fields are a plain object`);
    }
  }
});

const MB = 1_000_000;
/** Repetitions of small patterns that make naive scanners or backtracking regexes go quadratic. */
const HOSTILE: [string, string][] = [
  'a', '=', ' ', '"', "'", '[', ']', '{', '\\', '1', '-', ':', '<', 'a=', 'a="', 'a=" ', '\\"', 'a= ', 'a=\\"x ',
  '2024-03-05T', '2024-03-05T14:22:01', 'Oct 11 ', '[x a="', '{"a":', '"a":1,', ' - - [', '"GET / HTTP/1.1" ',
].map((p) => [p, p.repeat(Math.ceil(MB / p.length))]);
HOSTILE.push(['<13>1 header + SD', `<13>1 - h a p m [x${' a="b"'.repeat(MB / 6)}`]);
HOSTILE.push(['accesslog prefix + long url', `h - - [10/Oct/2000:13:55:36 -0700] "GET /${'a '.repeat(MB / 2)}`]);
HOSTILE.push(['syslog prefix + pairs', `<34>Oct 11 22:14:15 h a: ${'k=v '.repeat(MB / 4)}`]);
HOSTILE.push(['json string', `{"a":"${'x'.repeat(MB)}"}`]);
HOSTILE.push(['json wide', `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`]);

t.test('every parser runs in linear time on 1 MB hostile lines', async (t) => {
  for (const p of parsers) {
    let worst = 0;
    let worstName = '';
    for (const [name, line] of HOSTILE) {
      const start = performance.now();
      p.parse(line, 1000);
      const ms = performance.now() - start;
      if (ms > worst) {
        worst = ms;
        worstName = name;
      }
      if (ms > 2000) t.fail(`${p.name} took ${ms.toFixed(0)} ms on ${JSON.stringify(name)} x 1 MB`);
    }
    t.pass(`${p.name}: slowest ${worst.toFixed(1)} ms (${JSON.stringify(worstName)})`);
  }
});
