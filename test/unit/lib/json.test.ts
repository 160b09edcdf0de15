import t from 'tap';
import { jsonDepth, parseJsonBounded } from '../../../src/lib/json.js';

t.test('jsonDepth counts nesting outside strings', async (t) => {
  t.equal(jsonDepth('{"a":[1,{"b":2}]}', 100), 3);
  t.equal(jsonDepth('"[[[[{{{{"', 100), 0);
  t.equal(jsonDepth('{"a":"\\"[[["}', 100), 1);
  t.equal(jsonDepth('1', 100), 0);
});

t.test('parseJsonBounded refuses deep and malformed JSON with 400s', async (t) => {
  t.same(parseJsonBounded('{"a":1}', 5), { a: 1 });
  const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
  t.throws(() => parseJsonBounded(deep, 64), { code: 'E_JSON_TOO_DEEP', httpStatus: 400 });
  t.throws(() => parseJsonBounded('{"a":', 64), { code: 'E_JSON_MALFORMED', message: /malformed JSON/ });
});
