import t from 'tap';
import { createHash } from 'node:crypto';
import { canonicalTags, datasourceId } from '../../../src/events/index.js';

t.test('canonicalTags sorts by tag name (code unit order)', async (t) => {
  t.strictSame(canonicalTags({ type: 'x', host: 'h', Zed: 'z', a: '1' }), [
    ['Zed', 'z'],
    ['a', '1'],
    ['host', 'h'],
    ['type', 'x'],
  ]);
  t.strictSame(canonicalTags({}), []);
});

t.test('datasourceId is a 22-character base64url hash of repo and sorted tags', async (t) => {
  const id = datasourceId('sandbox', { host: 'web1', type: 'accesslog' });
  t.match(id, /^[A-Za-z0-9_-]{22}$/);
  // Independently computed: sha256 of the JSON of [repo, [[name, value]...]] in name order.
  const h = createHash('sha256');
  h.update('["sandbox",[["host","web1"],["type","accesslog"]]]');
  t.equal(id, h.digest('base64url').slice(0, 22));
});

t.test('datasourceId is stable and independent of tag order', async (t) => {
  const a = datasourceId('repo1', { host: 'web1', type: 'accesslog', env: 'prod' });
  t.equal(datasourceId('repo1', { host: 'web1', type: 'accesslog', env: 'prod' }), a, 'same input, same id');
  t.equal(datasourceId('repo1', { env: 'prod', type: 'accesslog', host: 'web1' }), a, 'reordered tags, same id');
  t.equal(datasourceId('repo1', { type: 'accesslog', env: 'prod', host: 'web1' }), a);
  t.equal(datasourceId('repo1', {}), datasourceId('repo1', {}));
});

t.test('datasourceId differs by repository and by every tag name and value', async (t) => {
  const base = { host: 'web1', type: 'accesslog' };
  const a = datasourceId('repo1', base);
  t.not(datasourceId('repo2', base), a, 'other repository');
  t.not(datasourceId('repo1', { host: 'web2', type: 'accesslog' }), a, 'other host value');
  t.not(datasourceId('repo1', { host: 'web1', type: 'accesslog2' }), a, 'other type value');
  t.not(datasourceId('repo1', { host: 'web1', type: 'Accesslog' }), a, 'values are case-sensitive');
  t.not(datasourceId('repo1', { host: 'web1' }), a, 'a tag fewer');
  t.not(datasourceId('repo1', { ...base, env: '' }), a, 'an extra tag with an empty value');
  t.not(datasourceId('repo1', { hostx: 'web1', type: 'accesslog' }), a, 'other tag name');
  t.not(datasourceId('repo1', { host: 'web1', type: '' }), datasourceId('repo1', { host: 'web1' }), 'empty value vs missing tag');
  t.not(datasourceId('repo1', { a: 'bc' }), datasourceId('repo1', { ab: 'c' }), 'name/value boundary is part of the hash');
  t.not(datasourceId('repo', { a: '1' }), datasourceId('rep', { o: '1' }), 'repo/tag boundary');

  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) seen.add(datasourceId('r', { host: `h${i}`, type: 't' }));
  t.equal(seen.size, 2000, '2000 distinct tag values give 2000 distinct ids');
});

t.test('datasourceId is injective even when tag values contain the separator characters', async (t) => {
  // Tag values are free text (ingest/tags.ts restricts names, not values), so a value may contain
  // U+0000 and U+0001. Two different tag sets must never share a datasource.
  const oneTag = { a: 'x\u0000b\u0001y' };
  const twoTags = { a: 'x', b: 'y' };
  t.notSame(canonicalTags(oneTag), canonicalTags(twoTags), 'precondition: different tag sets');
  t.not(datasourceId('r', oneTag), datasourceId('r', twoTags), 'one tag {a:"x\\0b\\1y"} vs two tags {a:"x", b:"y"}');
  t.not(datasourceId('r', { a: 'x\u0000b\u0001y\u0000c\u0001z' }), datasourceId('r', { a: 'x', b: 'y', c: 'z' }), 'one tag vs three tags');
});
