import { spawnSync } from 'node:child_process';
import t from 'tap';
import { compileRegex, groupsOf } from '../../../src/query/regex.js';

const fail = (m: string): never => {
  throw new Error(m);
};

t.test('named groups are renamed; the original names are kept by index', async (t) => {
  const cr = compileRegex('(?<a.b>\\d+)-(?<@x>\\w+)|(?<a.b>z)', '', fail);
  t.strictSame(cr.groupNames, ['a.b', '@x', 'a.b']);
  t.equal(cr.re.source, '(?<g0>\\d+)-(?<g1>\\w+)|(?<g2>z)');
  t.strictSame(groupsOf(cr, cr.re.exec('12-ab')!), [
    ['a.b', '12'],
    ['@x', 'ab'],
  ]);
  t.strictSame(groupsOf(cr, cr.re.exec('z')!), [['a.b', 'z']], 'a repeated name in another branch');
});

t.test('ignore case without V8\'s i flag: letters become two-case classes', async (t) => {
  const cases: [string, string][] = [
    ['abc', '[aA][bB][cC]'],
    ['[a-f0-9]', '[a-f0-9A-F]'],
    ['[^x]', '[^xX]'],
    ['\\w+\\S\\x4a\\u004a\\d', '\\w+\\S\\x4a\\u004a\\d'],
    ['(?<name>a)', '(?<g0>[aA])'],
    ['(?:a){2,3}', '(?:[aA]){2,3}'],
    ['é', '[éÉ]'],
    ['[A-z]', '[A-zA-Za-z]'],
  ];
  for (const [src, want] of cases) t.equal(compileRegex(src, 'i', fail).re.source, want, src);
  const cr = compileRegex('hello [w-z]orld', 'i', fail);
  t.equal(cr.re.flags, '');
  t.ok(cr.re.test('HeLLo WoRLD'));
  t.notOk(cr.re.test('hello vorld'));
  t.ok(compileRegex('(?i)abc', '', fail).re.test('ABC'), 'a leading (?i) adds the flag');
});

t.test('m, d (and s), g flags', async (t) => {
  t.ok(compileRegex('^b$', 'm', fail).re.test('a\nb\nc'));
  t.notOk(compileRegex('^b$', '', fail).re.test('a\nb\nc'));
  t.ok(compileRegex('a.b', 'd', fail).re.test('a\nb'));
  t.ok(compileRegex('a.b', 's', fail).re.test('a\nb'));
  t.notOk(compileRegex('a.b', '', fail).re.test('a\nb'));
  t.equal(compileRegex('a', 'g', fail).repeat, true);
  t.equal(compileRegex('a', '', fail).all.flags.includes('g'), true);
  t.throws(() => compileRegex('a', 'x', fail), /unknown regex flag 'x'/);
});

t.test('patterns that cannot run in linear time are refused with a reason', async (t) => {
  for (const p of ['(a)\\1', 'a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b', '(?<x>a)\\k<x>', 'a{2,5000}']) {
    t.throws(() => compileRegex(p, '', fail), /linear time|backreference/, p);
  }
  t.throws(() => compileRegex('(', '', fail), /invalid regex/);
  t.throws(() => compileRegex('[a', '', fail), /unterminated character class|invalid regex/);
});

t.test('compiled regexes are cached by (source, flags)', async (t) => {
  t.equal(compileRegex('x+y', 'i', fail), compileRegex('x+y', 'i', fail));
  t.not(compileRegex('x+y', 'i', fail), compileRegex('x+y', '', fail));
});

// Catastrophic patterns run in a child process with a hard timeout, so a regression that hangs
// fails this test instead of stalling the run.
t.test('catastrophic backtracking patterns finish quickly on 50,000 characters', async (t) => {
  const code = `
    import { compileRegex } from ${JSON.stringify(new URL('../../../src/query/regex.js', import.meta.url).href)};
    const fail = (m) => { throw new Error(m); };
    const input = 'a'.repeat(50000) + '!';
    const out = [];
    for (const p of ['(a+)+$', '(a|aa)+$', '(.*a){12}x', '^(\\\\w+\\\\s?)*$']) {
      for (const f of ['', 'i']) {
        const t0 = Date.now();
        const m = compileRegex(p, f, fail).re.test(input);
        out.push({ p, f, m, ms: Date.now() - t0 });
      }
    }
    console.log(JSON.stringify(out));
  `;
  const loader = process.execArgv.filter((a) => a.includes('typescript'));
  // SIGKILL: a child stuck in a regex never returns to its event loop, where a SIGTERM handler
  // (tap's coverage hooks install one) would run.
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  const r = spawnSync(process.execPath, [...loader, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 100_000, killSignal: 'SIGKILL', env });
  t.equal(r.signal, null, 'the child was not killed by the timeout');
  t.equal(r.status, 0, r.stderr);
  const results = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { p: string; f: string; m: boolean; ms: number }[];
  t.equal(results.length, 8);
  for (const x of results) {
    t.equal(x.m, false, `${x.p} /${x.f} does not match`);
    // Backtracking on 50,000 characters would run for hours; linear matching takes milliseconds.
    // The bound only tells the two apart, generously for a busy machine.
    t.ok(x.ms < 15_000, `${x.p} /${x.f} took ${x.ms} ms`);
  }
});
