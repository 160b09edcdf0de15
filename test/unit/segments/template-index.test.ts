/**
 * The skip index of templated blocks: when a raw string is cut cleanly by its template (no value
 * starts or ends inside a token run), encodeBlock takes its tokens and grams from the distinct
 * pieces instead of scanning it. Whatever the cuts, every token and every gram of every raw string
 * must still be in the block's filters (a miss would prune a block that holds a match).
 */
import t from 'tap';
import { addEvent, blockBloom, blockGrams, emptyColumns, encodeBlock, readBlockMeta } from '../../../src/segments/block.js';
import { bloomMayContain, forEachToken, isWord, lower } from '../../../src/segments/bloom.js';
import { encodeTemplate, templatePieces } from '../../../src/segments/raw-columns.js';
import { GRAM, gramFilterMayContain, gramProbes } from '../../../src/segments/grams.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { rnd } from '../../helpers/random.js';

const WORDS = ['GET', 'POST', 'api', 'v2', 'Mozilla', 'x86_64', 'ünïcödé', 'é', '200', '404', '10.0.0.1', 'a', 'ZZtop', '𝒳y'];
const SEPS = [' ', ' - ', '"', '] "', '/', ':', '=', '', '', 'q'];

/** Raw strings built from values and separators; some separators are empty or word characters, so some cuts split runs. */
function makeBlock(seed: number, n: number): { raw: string[]; fields: Record<string, string>[] } {
  const r = rnd(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const raw: string[] = [];
  const fields: Record<string, string>[] = [];
  for (let i = 0; i < n; i++) {
    const f: Record<string, string> = {};
    let s = r() < 0.5 ? pick(SEPS) : '';
    const k = 1 + Math.floor(r() * 5);
    for (let j = 0; j < k; j++) {
      const v = pick(WORDS) + (r() < 0.5 ? String(Math.floor(r() * 1000)) : '') + (r() < 0.3 ? pick(WORDS) : '');
      f[`f${j}`] = v;
      s += v + pick(SEPS);
    }
    // A field whose value is not in the raw string at all, and one that is only part of a run.
    if (r() < 0.3) f.absent = `nowhere${i}`;
    if (r() < 0.3) f.inner = s.slice(1, 4);
    raw.push(s);
    fields.push(f);
  }
  return { raw, fields };
}

function gramsOfRuns(s: string, each: (gram: string) => void): void {
  let run = '';
  for (let i = 0; i <= s.length; i++) {
    const u = i < s.length ? s.charCodeAt(i) : 32;
    if (isWord(u)) run += String.fromCharCode(lower(u));
    else {
      for (let q = 0; q + GRAM <= run.length; q++) each(run.slice(q, q + GRAM));
      run = '';
    }
  }
}

t.test('templated blocks: every raw token and gram is in the filters, clean cuts or not', async (t) => {
  let templated = 0;
  let cleanEvents = 0;
  let uncleanEvents = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { raw, fields } = makeBlock(seed, 60);
    const c = emptyColumns();
    raw.forEach((s, i) => addEvent(c, { timestamp: 1000 + i, timezone: 'Z', rawstring: s, fields: fields[i]!, ingestTimestamp: 1, offset: 0, index: i }));
    const pieces = templatePieces(c.count);
    const tpl = encodeTemplate(c.raw, [...c.fields.values()], c.count, pieces);
    if (tpl !== null) {
      templated++;
      for (let i = 0; i < c.count; i++) pieces.clean[i] === 1 ? cleanEvents++ : uncleanEvents++;
    }
    const block = encodeBlock(c, lz4Codec);
    const m = readBlockMeta(block, 0)!;
    const bloom = blockBloom(block, 0, m);
    const grams = blockGrams(block, 0, m);
    let missingTokens = 0;
    let missingGrams = 0;
    for (const s of raw) {
      forEachToken(s, (tok) => {
        if (!bloomMayContain(bloom, tok)) missingTokens++;
      });
      gramsOfRuns(s, (g) => {
        if (!gramFilterMayContain(grams, gramProbes(g))) missingGrams++;
      });
    }
    t.equal(missingTokens, 0, `seed ${seed}: no raw token missing from the bloom filter`);
    t.equal(missingGrams, 0, `seed ${seed}: no raw gram missing from the gram filter`);
  }
  t.ok(templated >= 20, `most blocks are templated (${templated} of 40)`);
  t.ok(cleanEvents > 100 && uncleanEvents > 100, `both clean (${cleanEvents}) and unclean (${uncleanEvents}) events occur`);
});

t.test('template pieces: which events are clean, their distinct gaps and placed columns', async (t) => {
  // "GET" sits between non-word units (clean); "ab" inside "xaby" cuts runs on both sides.
  const raw = ['"GET /x" 200', '"GET /y" 200', 'xaby 1'];
  const fields = [
    ['GET', 'GET', undefined],
    ['200', '200', undefined],
    [undefined, undefined, 'ab'],
  ];
  const pieces = templatePieces(3);
  const tpl = encodeTemplate(raw, fields, 3, pieces);
  t.not(tpl, null);
  t.strictSame([...pieces.clean], [1, 1, 0]);
  t.strictSame([...pieces.gaps].sort(), ['', '"', ' /x" ', ' /y" '].sort());
  t.strictSame([...pieces.columns].sort(), [0, 1]);
});

t.test('a gap repeated after an unclean event still reaches the filters', async (t) => {
  // Event 0: the value "cd" continues the run "ab" (unclean, scanned whole: token "abcd").
  // Event 1: the same first gap "ab" is cut cleanly; its token "ab" must be in the bloom filter.
  const c = emptyColumns();
  addEvent(c, { timestamp: 1, timezone: 'Z', rawstring: 'abcd rest', fields: { v: 'cd', w: 'rest' }, ingestTimestamp: 1, offset: 0, index: 0 });
  addEvent(c, { timestamp: 3, timezone: 'Z', rawstring: 'ab-ef rest', fields: { v: '-ef', w: 'rest' }, ingestTimestamp: 1, offset: 0, index: 1 });
  const block = encodeBlock(c, lz4Codec);
  const m = readBlockMeta(block, 0)!;
  for (const tok of ['abcd', 'ab', 'ef', 'rest']) t.ok(bloomMayContain(blockBloom(block, 0, m), tok), `token ${tok}`);
  t.ok(gramFilterMayContain(blockGrams(block, 0, m), gramProbes('abcd')));
  t.ok(gramFilterMayContain(blockGrams(block, 0, m), gramProbes('rest')));
});
