import t from 'tap';
import { BloomBuilder, bloomMayContain, forEachToken } from '../../../src/segments/bloom.js';

const tokens = (text: string): string[] => {
  const out: string[] = [];
  forEachToken(text, (tok) => out.push(tok));
  return out;
};

t.test('forEachToken splits on non-alphanumeric ASCII and lower-cases', async (t) => {
  t.strictSame(tokens('GET /api/v1/Users?id=42&x=Y'), ['get', 'api', 'v1', 'users', 'id', '42', 'x', 'y']);
  t.strictSame(tokens(''), []);
  t.strictSame(tokens('   ...,,;;  '), []);
  t.strictSame(tokens('a'), ['a']);
  t.strictSame(tokens('end'), ['end'], 'a token at the very end is emitted');
  t.strictSame(tokens('ip=10.0.0.1 port:8080'), ['ip', '10', '0', '0', '1', 'port', '8080']);
  t.strictSame(tokens('snake_case kebab-case CamelCase'), ['snake', 'case', 'kebab', 'case', 'camelcase'], '"_" and "-" split');
  t.strictSame(tokens('Ünïcode wörter 日本語 x'), ['ünïcode', 'wörter', '日本語', 'x'], 'non-ASCII characters are word characters');
  t.strictSame(tokens('tab\there\nnewline\r\nend'), ['tab', 'here', 'newline', 'end']);
});

t.test('forEachToken caps a token at 64 characters', async (t) => {
  const long = 'A'.repeat(100);
  t.strictSame(tokens(`x ${long} y`), ['x', 'a'.repeat(64), 'y']);
  t.strictSame(tokens('b'.repeat(64)), ['b'.repeat(64)]);
  t.strictSame(tokens('c'.repeat(65)), ['c'.repeat(64)]);
});

t.test('bloom size: 1024 bits minimum, ~10 bits per token, capped at 2 Mbit', async (t) => {
  t.equal(new BloomBuilder().build().length, 128, 'empty: 1024 bits');
  const small = new BloomBuilder();
  small.addText('one two three');
  t.equal(small.build().length, 128);
  const mid = new BloomBuilder();
  for (let i = 0; i < 5000; i++) mid.addValue(`tok${i}`);
  t.equal(mid.build().length, 65536 / 8, '5000 tokens -> 65536 bits (first power of two >= 50000)');
  const huge = new BloomBuilder();
  for (let i = 0; i < 300_000; i++) huge.addValue(`t${i}`);
  t.equal(huge.build().length, (1 << 21) / 8, 'capped at 2 Mbit');
  t.equal(bloomMayContain(Buffer.alloc(0), 'anything'), true, 'an empty bloom cannot exclude anything');
});

t.test('every inserted token and whole value is found; absent tokens mostly are not', async (t) => {
  const b = new BloomBuilder();
  const inserted = new Set<string>();
  const values: string[] = [];
  let seed = 12345;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  // ~5,000 distinct tokens: raw text tokens plus field values (whole value and its tokens).
  for (let i = 0; i < 950; i++) {
    const raw = `req${i} user${rnd() % 100000} path/seg${i}`;
    b.addText(raw);
    forEachToken(raw, (tok) => inserted.add(tok));
    const v = `Val-${i}.Host${rnd() % 1000}`;
    values.push(v);
    b.addValue(v);
    inserted.add(v.toLowerCase());
    forEachToken(v, (tok) => inserted.add(tok));
  }
  t.ok(inserted.size >= 4500 && inserted.size <= 6000, `${inserted.size} distinct tokens`);
  const bloom = b.build();
  let missing = 0;
  for (const tok of inserted) if (!bloomMayContain(bloom, tok)) missing++;
  t.equal(missing, 0, 'no false negatives for tokens');
  t.equal(values.filter((v) => !bloomMayContain(bloom, v)).length, 0, 'whole values found, in their original case');
  t.equal(values.filter((v) => !bloomMayContain(bloom, v.toUpperCase())).length, 0, 'case-insensitive');

  let fp = 0;
  let tried = 0;
  for (let i = 0; tried < 10_000; i++) {
    const tok = `absent${rnd().toString(36)}x${i}`;
    if (inserted.has(tok)) continue;
    tried++;
    if (bloomMayContain(bloom, tok)) fp++;
  }
  t.ok(fp / tried < 0.05, `false-positive rate ${(100 * fp / tried).toFixed(2)}% < 5% over ${tried} absent tokens`);
  t.equal(tried, 10_000);
});

t.test('short absent tokens are rejected too (hash avalanche)', async (t) => {
  const b = new BloomBuilder();
  for (let i = 0; i < 500; i++) b.addText(`w${i}`);
  const bloom = b.build();
  let fp = 0;
  let n = 0;
  for (let i = 500; i < 10_500; i++) {
    n++;
    if (bloomMayContain(bloom, `w${i}`)) fp++;
  }
  let missing = 0;
  for (let i = 0; i < 500; i++) if (!bloomMayContain(bloom, `W${i}`)) missing++;
  t.equal(missing, 0, 'all 500 inserted tokens found');
  t.ok(fp / n < 0.05, `false-positive rate ${(100 * fp / n).toFixed(2)}% for near-identical short tokens`);
});
