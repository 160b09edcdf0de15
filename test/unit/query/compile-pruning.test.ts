import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { boundedTokens } from '../../../src/query/pruning.js';
import { BloomBuilder } from '../../../src/segments/bloom.js';
import { GramFilterBuilder } from '../../../src/segments/grams.js';
import { blockMayMatch, blockProbes } from '../../../src/query/scan.js';
import { ctxOf, runCompiled, type Fields } from './driver.js';
import { rnd } from '../../helpers/random.js';

const prune = (q: string) => compileQuery(q, { ctx: ctxOf() }).pruning;
/** One alternative: whole tokens for the bloom, words for the gram filter. */
const n = (tokens: string[], words: string[] = []) => ({ tokens, words });

t.test('block needs: whole field values and bounded free-text tokens for the bloom; words of free text and field wildcards for the gram filter (format 4: it holds field values too)', async (t) => {
  t.strictSame(prune('user=Alice').bloom, [n(['alice'])]);
  t.strictSame(prune('user="Alan Turing"').bloom, [n(['alan turing'])], 'the whole value, not its words');
  t.strictSame(prune('foo').bloom, null, 'a bare word is a substring: no whole token, and shorter than a gram');
  t.strictSame(prune('zq7xk2vblm').bloom, [n([], ['zq7xk2vblm'])], 'a bare word: no whole token, but every gram of it');
  t.strictSame(prune('"GET /x7kq9 HTTP"').bloom, [n(['x7kq9'], ['x7kq9', 'http'])], 'the bounded token only; the words a gram long');
  t.strictSame(prune('"a b c"').bloom, [n(['b'])]);
  t.strictSame(prune('err*timeout').bloom, [n([], ['timeout'])], 'wildcard pieces: unbounded tokens, words a gram long');
  t.strictSame(prune('"err*timeout"').bloom, [n([], ['timeout'])], 'a quoted star is a wildcard too');
  t.strictSame(prune('url="*/login/*"').bloom, [n(['login'], ['login'])], 'quoted wildcard value');
  t.strictSame(prune('"x" foo*-bar-*baz').bloom, [n(['bar'])]);
  t.strictSame(prune('"GET /LOGIN-page"').bloom, [n(['login'], ['login', 'page'])], 'tokens are folded');
  t.strictSame(prune('user=a or timeout').bloom, [n(['a']), n([], ['timeout'])]);
  t.strictSame(prune('url=*login*').bloom, [n([], ['login'])], 'field values are in the gram filter');
  t.strictSame(prune('url like "login"').bloom, [n([], ['login'])]);
  t.strictSame(prune(`${'Q'.repeat(70)}`).bloom, [n([], ['q'.repeat(36)])], 'a long word: its first grams');
  t.strictSame(prune('url=*/login/*').bloom, [n(['login'], ['login'])]);
  t.strictSame(prune('url=login/x7*').bloom, [n(['login'], ['login'])], 'anchored start: the first piece is bounded on the left');
  t.strictSame(prune('url=*x7/login').bloom, [n(['login'], ['login'])], 'anchored end: the last piece is bounded on the right');
  t.strictSame(prune('user=*son').bloom, null, 'son may be the end of a longer token');
  t.strictSame(prune('user=Al*').bloom, null);
  t.strictSame(prune('#type=accesslog').bloom, null, 'tags are not in the bloom');
  t.strictSame(prune('@rawstring=x').bloom, null, '@-fields are not in the bloom');
  t.strictSame(prune('status!=200').bloom, null);
  t.strictSame(prune('status>200').bloom, null);
  t.strictSame(prune('url=/login/').bloom, null);
  t.strictSame(prune('not user=bob').bloom, null);
  t.strictSame(prune('user=""').bloom, null);
  t.strictSame(prune('user=a or user=b').bloom, [n(['a']), n(['b'])]);
  t.strictSame(prune('user=a or foo').bloom, null);
  t.strictSame(prune('user=a host=b').bloom, [n(['a', 'b'])]);
  t.strictSame(prune('user=a | host=b | count()').bloom, [n(['a', 'b'])]);
  t.strictSame(prune('(user=a or user=b) host=c').bloom, [n(['a', 'c']), n(['b', 'c'])]);
  t.strictSame(prune('in(x, values=[a]) | user=a').bloom, [n(['a'])], 'in() is a pure filter');
  t.strictSame(prune('lowercase(user) | user=a').bloom, null, 'a transformation ends the prefix');
  t.strictSame(prune('x := 1 | user=a').bloom, null);
  t.strictSame(prune('/(?<user>\\w+)/ | user=a').bloom, null, 'an extracting regex ends the prefix');
  t.strictSame(prune('/(?<user>\\w+)/ user=a').bloom, null);
  t.strictSame(prune('user=a /(?<u>\\w+)/ host=b').bloom, [n(['a'])]);
  t.strictSame(prune(`" ${'Q'.repeat(70)} "`).bloom, [n(['q'.repeat(64)], ['q'.repeat(36)])], 'long runs: the 64-character prefix the bloom keeps');
  t.strictSame(prune(`v=${'Q'.repeat(70)}`).bloom, [n(['q'.repeat(70)])], 'whole values are hashed uncapped');
  t.strictSame(prune('"x ÄBC-Ünï x"').bloom, [n(['äbc', 'ünï'])], 'non-ASCII letters are token characters, folded');
  t.strictSame(prune('"x ÄBCD-Ünï x"').bloom, [n(['äbcd', 'ünï'], ['äbcd'])]);
  t.strictSame(boundedTokens('a-b-c', true, false), ['a', 'b']);
  t.strictSame(prune('/POST \\/api\\/v2\\/orders\\/[0-9]+/').bloom, [n(['api', 'v2', 'orders'], ['post', 'orders'])], 'a regex: its required literal');
  t.strictSame(prune('/request failed: (Timeout|Deadlock)/i').bloom, [n(['failed'], ['request', 'failed'])]);
  t.strictSame(prune('/x|timeout/').bloom, null, 'no literal every match needs');
});

t.test('tag predicate: false only when no event of the datasource can match', async (t) => {
  let p = prune('#type=accesslog').tags!;
  t.equal(p({ type: 'accesslog' }), true);
  t.equal(p({ type: 'kv' }), false);
  t.equal(p({}), true, 'a datasource without the tag is unknown');
  p = prune('#type=access* #host!=h1').tags!;
  t.equal(p({ type: 'accesslog', host: 'h2' }), true);
  t.equal(p({ type: 'accesslog', host: 'h1' }), false);
  t.equal(p({ type: 'syslog', host: 'h2' }), false);
  p = prune('#type=a or #type=b').tags!;
  t.equal(p({ type: 'b' }), true);
  t.equal(p({ type: 'c' }), false);
  p = prune('#type=a or foo').tags!;
  t.equal(p({ type: 'c' }), true, 'or with an unknown side');
  p = prune('not #type=a').tags!;
  t.equal(p({ type: 'a' }), false);
  t.equal(p({ type: 'b' }), true);
  p = prune('#type=/^acc/').tags!;
  t.equal(p({ type: 'syslog' }), false);
  t.equal(prune('#repo=x').tags, null, '#repo is not a stored tag');
  t.equal(prune('foo | count()').tags, null);
  t.equal(prune('x := 1 | #type=a').tags, null);
  p = prune('#type=a | #host=b | groupBy(x)').tags!;
  t.equal(p({ type: 'a', host: 'c' }), false);
});

// Property: over random events and queries, a block or datasource with a matching event is never pruned.
// Words that are pieces of other words ("login" in "xlogin") make substring searches differ from token searches.
const WORDS = ['alpha', 'alphabet', 'Beta', 'GET', 'GETs', 'post', 'ppost', 'x7', 'x7y', 'err', 'errx', 'timeout', 'timeouts', 'a-b', 'ÄÖ', 'ÄÖx', 'login', 'xlogin', 'Login', 'api/v1', '404', '200'];
const QUERIES = [
  'alpha',
  '/GET .*login/',
  '/api\\/v1\\/x7/',
  '/LOGIN/i',
  '/(?:err|x7)timeout/',
  '/alpha[bB]et/',
  '"GET /login "',
  '"post api/v1 "',
  'err*timeout',
  'method=GET',
  'method=get',
  'url=*login*',
  'url=login/x7*',
  'url=*/login',
  'url="api/v1/x7"',
  'method=GET or method=post',
  '(method=GET or status=404) "err timeout"',
  'not method=GET',
  '#type=kv method=post',
  '#type=acc* or status=200',
  '#host!=h1',
  'status>=404 "x7 "',
  'in(method, values=[GET]) | url=x7',
  'user=a-b',
  'url like "ÄÖ"',
  '"-Login-"',
  '"GET /login"',
  '"post x"',
  '"s timeout"',
  'url="login/xlogin"',
  'url=*logi*',
  'ogin',
  'LOGIN',
  'timeouts',
  'alphabe',
  'phab*imeo',
  '"rrx-ti"',
  'ÄÖX',
  'ppos or imeou',
  'lpha tbeta',
];


t.test('pruning never drops a block or datasource that holds a match', async (t) => {
  const r = rnd(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let checked = 0;
  let pruned = 0;
  for (let block = 0; block < 150; block++) {
    const tags = { type: pick(['kv', 'accesslog', 'syslog']), host: pick(['h1', 'h2']) };
    const events: Fields[] = [];
    for (let i = 0; i < 3; i++) {
      const fields: Fields = { method: pick(['GET', 'post', 'PUT']), url: `${pick(WORDS)}/${pick(WORDS)}`, status: pick(['200', '404', '500']), user: pick(WORDS) };
      const raw = Array.from({ length: 5 }, () => pick(WORDS)).join(pick([' ', '-', ' /']));
      events.push({ '@timestamp': String(1000 + i), '@rawstring': `${fields['method']} ${raw} ${fields['url']}`, '@id': `b${block}e${i}`, '#repo': 'r', '#type': tags.type, '#host': tags.host, ...fields });
    }
    const bloom = new BloomBuilder();
    const grams = new GramFilterBuilder();
    for (const e of events) {
      bloom.addText(e['@rawstring']!);
      grams.addText(e['@rawstring']!);
      // As format 4 blocks hold them: every field value in the bloom and in the gram filter.
      for (const [k, v] of Object.entries(e)) {
        if (k.startsWith('@') || k.startsWith('#')) continue;
        bloom.addValue(v);
        grams.addText(v);
      }
    }
    const bits = bloom.build();
    const gramBits = grams.build();
    for (const q of QUERIES) {
      const compiled = compileQuery(q, { ctx: ctxOf() });
      const matches = runCompiled(compiled, events, 1).rows.length > 0;
      const bloomOk = compiled.pruning.bloom === null || blockMayMatch(bits, gramBits, blockProbes(compiled.pruning.bloom), true);
      const tagsOk = compiled.pruning.tags === null || compiled.pruning.tags(tags);
      if (matches) {
        checked++;
        if (!bloomOk || !tagsOk) t.fail(`${q} pruned a block with a match: ${JSON.stringify(events)}`);
      } else if (!bloomOk || !tagsOk) pruned++;
    }
  }
  t.ok(checked > 200, `${checked} matching blocks checked`);
  t.ok(pruned > 100, `${pruned} non-matching blocks pruned (pruning does something)`);
});
