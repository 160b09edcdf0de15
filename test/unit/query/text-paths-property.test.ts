/**
 * Property: free-text phrases, substrings and regexes searched over templated raw strings without
 * building them (text-match.ts, regex-literal.ts, the text parts of columnar.ts) give the same
 * answer as the per-event path and as MapEvents one by one, on random log-like blocks (values
 * placed in the raw strings, some glued to words, unicode that folds oddly: Kelvin sign, final
 * sigma, dotted capital I, sharp s, astral characters) and random queries cut from the events'
 * own text (spanning gaps and values, case changed, regex metacharacters, quantifiers, classes,
 * groups, the `i`, `m` and `d` flags). And: a regex's required literal is in every string it
 * matches, and a pattern called exact matches exactly the strings that contain it.
 */
import t from 'tap';
import { eventId } from '../../../src/events/event-id.js';
import { BlockView } from '../../../src/query/block-view.js';
import { compileQuery } from '../../../src/query/compile.js';
import { Meter } from '../../../src/query/memory.js';
import { compileRegex } from '../../../src/query/regex.js';
import { regexAlphabet, regexLiteral, regexLocal } from '../../../src/query/regex-literal.js';
import { SeenBytesCache } from '../../../src/query/seen-bytes.js';
import { headDicts, unreadCounts } from '../../../src/query/text-columns.js';
import { decidedByValues, keptTemplates, walkCounts } from '../../../src/query/text-scan.js';
import { TemplateHeads } from '../../../src/query/template-heads.js';
import { blockScanner, splitAtAggregate } from '../../../src/query/scan.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { fold } from '../../../src/query/casefold.js';
import { Needle } from '../../../src/query/text-match.js';
import { MapEvent, type Aggregator, type Ev, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, assembleBlock, assembleBlockV4, assembleBlockV5, emptyColumns, encodeBlockContent, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { rnd } from '../../helpers/random.js';
import { ctxOf } from './driver.js';

interface Raw {
  ts: number;
  raw: string;
  fields: Record<string, string>;
  off: number;
}

const ORIGIN = { repoName: 'r', partition: 1, tags: { type: 'web' } };
const USERS = ['alice', 'Bob', 'ΣΊΣΥΦΟΣ', 'straße', 'İstanbul', '\u212Aelvin', 'kelvin', 'x😀y', '-', 'OS X'];
const AGENTS = ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15)', 'curl/8.1', 'Go-http-client/1.1', 'MOZILLA/4.0 (compatible; MSIE 6.0)', 'ΣΑΣ agent ς', 'bot\u212A/1'];
const PATHS = ['/products', '/products/42', '/checkout', '/api/v1/items', '/ÄÖ/ü', '/search?q=Mac+OS', '/x7'];

/** Units that fold oddly or take 2 to 4 UTF-8 bytes, for text columns stored as non-ASCII UTF-8. */
const ODD = ['ü', 'K', '\u212A', '😀', 'ς', 'İ', 'ß', 'k'];

function events(r: () => number, n: number, t0: number, mainForm?: number, uniformForm = false): Raw[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // One main line format per block (as a log source has), a few lines of the others; some blocks
  // only the main one (then a gap of digits alone is an integer column).
  const main = mainForm ?? pick([0.3, 0.7, 0.7, 0.8, 0.95]);
  const uniform = uniformForm || r() < 0.2;
  return Array.from({ length: n }, (_, i) => {
    const fields: Record<string, string> = {};
    fields['client'] = `10.${Math.floor(r() * 3)}.${Math.floor(r() * 4)}.${Math.floor(r() * 256)}`;
    fields['method'] = pick(['GET', 'POST', 'get', 'DELETE']);
    fields['url'] = `${pick(PATHS)}${r() < 0.5 ? `/${Math.floor(r() * 100000)}` : ''}`;
    fields['status'] = pick(['200', '404', '500', '301']);
    fields['size'] = String(Math.floor(r() * 20000) - (r() < 0.1 ? 30000 : 0));
    if (r() < 0.8) fields['user'] = pick(USERS);
    fields['agent'] = pick(AGENTS);
    // A numeric dictionary column (a response time), sometimes absent or not a number.
    if (r() < 0.95) fields['rt'] = r() < 0.02 ? 'n/a' : (Math.floor(r() * 300) / 1000).toFixed(3);
    if (r() < 0.2) fields['extra'] = `${pick(USERS)} ${pick(PATHS)}`;
    // A many-valued text column with units outside ASCII (stored as one UTF-8 run).
    if (r() < 0.5) fields['note'] = `${pick(ODD)}${Math.floor(r() * 1e6)}${pick(ODD)} ${pick(USERS)}`;
    // A field free text does not search (a `#` name), placed in the raw string all the same.
    if (r() < 0.1) fields['#ref'] = `ref${pick(USERS)}`;
    const form = uniform || r() < 0.9 ? main : r();
    const raw =
      form < 0.6
        ? `[${i % 300}] ${fields['client']} - ${fields['user'] ?? '-'} [06/May/2024] "${fields['method']} ${fields['url']} HTTP/1.1" ${fields['status']} ${fields['size']} "${fields['agent']}" ${fields['note'] ?? ''}${fields['#ref'] ?? ''}`
        : form < 0.75
          ? // Values glued to words and to each other (template cuts inside token runs).
            `x${fields['method']}${fields['status']}y ${fields['user'] ?? ''}${fields['size']}:${fields['url']}Z ${fields['agent']}`
          : form < 0.9
            ? // A gap of digits only (1s and 9s: no status holds them), between two placed values.
              `${fields['method']}${Array.from({ length: 6 }, () => (r() < 0.5 ? '1' : '9')).join('')}${fields['url']} ${fields['note'] ?? fields['agent']}`
            : // Too little of the line is field values for a template: raw strings stored as text, url as references into them.
              `${pick(USERS)} free text at ${fields['url']} with a long tail of words that no field holds ${pick(USERS)}`;
    return { ts: t0 + i * 1000, raw, fields, off: 10 + i };
  });
}

let blocksMade = 0;

/** A block the digest still holds in memory (no encoded columns). */
function memoryBlock(evs: readonly Raw[]): BlockView {
  const c = emptyColumns();
  for (const e of evs) appendEvent(c, e.ts, 'Z', e.raw, e.fields, 5, e.off, 0);
  return BlockView.fromColumns(c, ORIGIN);
}

/**
 * A block as segments store it, the formats in turn (unless told): segment format 6 (column frames,
 * small dictionaries' entries in the head's summaries), 5 (column frames) and 4 (one LZ4 body).
 */
function block(evs: readonly Raw[], format: 4 | 5 | 6 = ([6, 5, 4] as const)[blocksMade++ % 3]!): BlockView {
  const c = emptyColumns();
  for (const e of evs) appendEvent(c, e.ts, 'Z', e.raw, e.fields, 5, e.off, 0);
  const content = encodeBlockContent(c);
  const bytes = format === 6 ? assembleBlock(content, lz4Codec) : format === 5 ? assembleBlockV5(content, lz4Codec) : assembleBlockV4(content, lz4Codec);
  const view = BlockView.fromEncoded(encodedBlockAt(bytes, 0, readBlockMeta(bytes, 0)!, lz4Codec), ORIGIN);
  formats.set(view, format);
  return view;
}

/** The segment format each block was stored in. */
const formats = new WeakMap<BlockView, number>();

/**
 * How text search reads a stored dictionary field (text-columns.ts fieldColumn): its entries as
 * bytes in its frame (formats 5 and 6), or decoded (format 4; format 6 when its entries are in the head's summary).
 */
function dictRead(v: BlockView, name: string): string {
  return `field k format ${formats.get(v)} ${v.columnBytes(name) !== null ? 'bytes' : 'decoded'}`;
}

function mapEvent(e: Raw): Ev {
  return new MapEvent([
    ['@timestamp', String(e.ts)],
    ['@rawstring', e.raw],
    ['@id', eventId(ORIGIN.partition, e.off, 0, e.ts)],
    ['@timezone', 'Z'],
    ['@ingesttimestamp', '5'],
    ['#repo', 'r'],
    ['#type', 'web'],
    ...Object.entries(e.fields),
  ]);
}

/** Some units of `s` in the other case (or folded). */
function recase(r: () => number, s: string): string {
  let out = '';
  for (const ch of s) out += r() < 0.3 ? (r() < 0.5 ? ch.toUpperCase() : ch.toLowerCase()) : ch;
  return out;
}

/** A piece of an event's text, 1 to 14 units long, cut anywhere (across gaps and values). */
function cutOf(r: () => number, evs: readonly Raw[]): string {
  const e = evs[Math.floor(r() * evs.length)]!;
  const src = r() < 0.85 ? e.raw : (Object.values(e.fields)[Math.floor(r() * Object.keys(e.fields).length)] ?? e.raw);
  const len = 1 + Math.floor(r() * 14);
  const at = Math.floor(r() * Math.max(1, src.length - len));
  return src.slice(at, at + len);
}

/** A free-text phrase (quoted: spaces and punctuation kept), or null when it cannot be quoted as is. */
function phraseOf(r: () => number, evs: readonly Raw[]): string | null {
  let s = cutOf(r, evs);
  if (r() < 0.5) s = recase(r, s);
  if (r() < 0.05) s = 'no such phrase here';
  if (/["\\*]/.test(s) || s.length === 0) return null;
  return `"${s}"`;
}

const META = /[\\^$.*+?()[\]{}|/]/g;

/** A regex made from an event's text: literal runs, with metacharacters, quantifiers, classes and groups mixed in. */
function regexOf(r: () => number, evs: readonly Raw[], more?: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const s = cutOf(r, evs);
  let src = '';
  for (const ch of s) {
    // An astral character stays whole (a quantifier after half of it would be a new pattern).
    src += ch.replace(META, '\\$&');
    const x = r();
    if (x < 0.04) src += pick(['?', '*', '+', '{0,2}', '{1}', '+?', '*?']);
    else if (x < 0.08) src += pick(['.', '\\d', '\\w+', '[a-z]', '[^ ]*', '(?:GET|post)', '\\s?', '\\/']);
    else if (x < 0.09) src += '|';
  }
  // A group of alternatives cut from the events' text (a literal followed by one of them: the
  // shape whose characters are all known, regex-literal.ts regexAlphabet).
  // (From a random stream of its own, `more`: the other draws stay as they were for every seed.)
  if (more !== undefined && more() < 0.25) src += `(${[cutOf(more, evs), cutOf(more, evs), ...(more() < 0.3 ? [''] : [])].map((x) => x.replace(META, '\\$&')).join('|')})`;
  if (r() < 0.1) src = `^${src}`;
  if (r() < 0.1) src += '$';
  if (src.endsWith('\\') && !src.endsWith('\\\\')) src = src.slice(0, -1);
  const flags = pick(['', '', 'i', 'i', 'm', 'd', 'im']);
  return `/${src}/${flags}`;
}

/**
 * A regex of the access log's shape, from an event's method and url: `POST \/api\/v2\/orders\/[0-9]+`
 * (its literal runs from the method across the gap into the url; digit runs as a class), now and
 * then with a group of endings, cut short, case folded or anchored.
 */
function accessRegexOf(r: () => number, evs: readonly Raw[]): string {
  const e = evs[Math.floor(r() * evs.length)]!;
  let src = `${e.fields['method']} ${e.fields['url']}`.replace(META, '\\$&').replace(/[0-9]+/g, r() < 0.5 ? '[0-9]+' : '\\d+');
  if (r() < 0.3) src = src.slice(0, Math.max(2, Math.floor(r() * src.length))).replace(/\\$|\[[^\]]*$/, '');
  if (r() < 0.3) src += `(?:${['\\/42', '\\/[0-9]+', ' HTTP', '$'][Math.floor(r() * 4)]}|\\/x7)`;
  if (r() < 0.1) src = `^${src}`;
  return `/${src}/${['', '', 'i', 'm'][Math.floor(r() * 4)]}`;
}

function count(q: ReturnType<typeof compileQuery>, blocks: readonly Raw[][], views: readonly BlockView[], columnPath: boolean): string {
  const { maps, agg } = splitAtAggregate(q);
  const merged = agg.init();
  blocks.forEach((evs, b) => {
    const result = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
    const scanner = blockScanner(maps, agg, result, { start: 0, end: 1e15, columnPath, meter: new Meter(null), overTime: () => undefined });
    scanner.view(views[b]!, true);
    agg.merge(merged, structuredClone(result.state));
    void evs;
  });
  return JSON.stringify(agg.finish(merged).map((x) => x.names().sort().map((n) => [n, x.get(n)])));
}

function oracle(q: ReturnType<typeof compileQuery>, blocks: readonly Raw[][]): string {
  const at = q.stages.findIndex((s) => s.kind === 'agg');
  const agg = (q.stages[at] as { agg: Aggregator<unknown> }).agg;
  const merged = agg.init();
  for (const evs of blocks) {
    const st = agg.init();
    const feed = chainStages(q.stages.slice(0, at) as MapStage[], (e) => agg.add(st, e));
    for (const e of evs) feed(mapEvent(e));
    agg.merge(merged, structuredClone(st));
  }
  return JSON.stringify(agg.finish(merged).map((x) => x.names().sort().map((n) => [n, x.get(n)])));
}

t.test('text search over templates = per-event path = MapEvents (phrases, substrings, regexes)', async (t) => {
  const r = rnd(Number(process.env.PROPERTY_SEED ?? 1919));
  const more = rnd(Number(process.env.PROPERTY_SEED ?? 1919) + 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let checked = 0;
  let templated = 0;
  let matchedSome = 0;
  let accessChecked = 0;
  let accessMatched = 0;
  const encodings = new Set<string>();
  const seen = new SeenBytesCache();
  const unread0 = { ...unreadCounts };
  const head0 = { ...headDicts };
  const byValues0 = decidedByValues.rows;
  const walks0 = { ...walkCounts };
  // One thread's template heads across all rounds: its table of gap texts grows while needles change.
  const heads = new TemplateHeads();
  const kept0 = { ...keptTemplates };
  for (let round = 0; round < 25; round++) {
    const blocks: Raw[][] = [];
    // Now and then a block large enough for 2-byte dictionary codes (over 254 distinct gaps).
    for (let b = 0; b < 1 + Math.floor(r() * 3); b++) blocks.push(round % 8 === 7 && b === 0 ? events(r, 3000, 1_000_000, 0.3) : round % 8 === 3 && b === 0 ? events(r, 100, 1_000_000, 0.8, true) : events(r, 40 + Math.floor(r() * 120), 1_000_000 + b * 1_000_000));
    // The large blocks (rounds 7, 15, 23: dictionaries past a head summary's 64 entries) in formats 6, 5 and 4.
    const views = blocks.map((evs) => (evs.length >= 1000 ? block(evs, ([6, 5, 4] as const)[Math.floor(round / 8) % 3]) : r() < 0.15 ? memoryBlock(evs) : block(evs)));
    // Most stored blocks keep their text columns' bytes as a scan does (seen-bytes.ts): the first
    // search reads every column, later ones leave out those that cannot hold their needle.
    views.forEach((v, b) => {
      if (formats.has(v) && more() < 0.8) v.seen = seen.block(`round ${round}`, b, 0);
      // And their raw template heads (template-heads.ts): later searches leave the raw column unread
      // unless a gap holds the needle, a row is walked across cuts or a regex needs the raw string.
      if (formats.has(v) && more() < 0.8) v.templateHead = heads.block(`round ${round}`, b, 0);
    });
    templated += views.filter((v) => v.template() !== null).length;
    for (const v of views) for (const g of v.template()?.gaps ?? []) encodings.add(g.e === 'k' ? `k${g.w}` : g.e);
    for (const v of views) for (const name of v.fieldNames()) encodings.add(`field ${v.encoding(name) ?? 'in memory'}`);
    for (const v of views) for (const name of v.fieldNames()) if (v.encoding(name) === 'k' && formats.has(v)) encodings.add(dictRead(v, name));
    for (const v of views) encodings.add(`raw ${v.template() !== null ? 't' : v.rawUtf8() !== null ? 'j' : 'in memory'}`);
    const all = blocks.flat();
    for (let k = 0; k < 16; k++) {
      const kind = r();
      let filter: string | null;
      if (kind < 0.45) filter = phraseOf(r, all);
      else if (kind < 0.55) {
        // A bare word or substring (the word path, and its cut rows searched piece by piece).
        const w = cutOf(r, all).replace(/[^A-Za-z0-9\u0080-\uffff]/g, '');
        filter = w.length === 0 ? null : recase(r, w);
      } else {
        filter = regexOf(r, all, more);
        // (From `more`, as below: the draws of `r` stay as they were for every seed.)
        if (more() < 0.3) filter = accessRegexOf(more, all);
      }
      const access = filter !== null && kind >= 0.55 && /^\/\^?(GET|POST|get|DELETE) /.test(filter);
      if (filter === null) continue;
      const rest = pick(['count()', 'count()', 'groupBy(method)', 'count(user, distinct=true)']);
      const second = r() < 0.15 ? ` | ${pick(['status=404', 'not "GET"', '/\\d{3}/', 'method=GET'])}` : '';
      // A filter before the search now and then: the search then narrows a selection of rows.
      const first = more() < 0.15 ? `${['method=POST', 'status!=404', 'method=GET OR status=500'][Math.floor(more() * 3)]} | ` : '';
      const text = `${first}${filter}${second} | ${rest}`;
      let q: ReturnType<typeof compileQuery>;
      try {
        q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
      } catch {
        continue; // a generated regex the product refuses (not linear): nothing to compare
      }
      const want = oracle(q, blocks);
      const perEvent = count(q, blocks, views, false);
      const columns = count(q, blocks, views, true);
      if (perEvent !== want) t.fail(`${text}: per-event path differs from MapEvents\nmap events: ${want}\nper event:  ${perEvent}`);
      if (columns !== want) t.fail(`${text}: column path differs\nmap events: ${want}\ncolumns:    ${columns}`);
      if (!want.includes('"_count","0"')) matchedSome++;
      if (access) accessChecked++;
      if (access && !want.includes('"_count","0"')) accessMatched++;
      checked++;
    }
  }
  t.ok(checked > 300, `${checked} random text searches compared`);
  t.ok(templated > 20, `${templated} blocks with templated raw strings`);
  t.ok(matchedSome > checked / 3, `${matchedSome} of them matched something`);
  t.ok(accessChecked > 20 && accessMatched > accessChecked / 3, `${accessChecked} regexes of the access log's shape (method, gap, url), ${accessMatched} matched something`);
  t.ok(unreadCounts.made - unread0.made > 20, `${unreadCounts.made - unread0.made} text columns left unread`);
  t.ok(unreadCounts.dicts > unread0.dicts, `${unreadCounts.dicts - unread0.dicts} of them dictionaries (entries in their frame)`);
  t.ok(unreadCounts.read - unread0.read > 5, `${unreadCounts.read - unread0.read} of them read after all (cuts, regexes)`);
  t.ok(headDicts.read - head0.read > 5 && headDicts.made - headDicts.read > head0.made - head0.read + 20, `dictionaries searched from their heads' entries: ${headDicts.made - head0.made}, their codes read for ${headDicts.read - head0.read}`);
  t.ok(decidedByValues.rows > byValues0, `${decidedByValues.rows - byValues0} rows' regex decided by their field values`);
  t.ok(walkCounts.skipped > walks0.skipped, `${walkCounts.skipped - walks0.skipped} pieces passed over by walks across template cuts`);
  t.ok(walkCounts.bySpan > walks0.bySpan, `${walkCounts.bySpan - walks0.bySpan} rows' regex matched in the pieces holding its literal`);
  const searched = keptTemplates.searched - kept0.searched;
  const read = keptTemplates.read - kept0.read;
  t.ok(searched > 30, `${searched} searches from kept template heads`);
  t.ok(read > 10 && searched - read > 5, `${read} of them read the raw column after all, ${searched - read} did not`);
  // Every way text-columns.ts reads a column was met.
  for (const e of ['k1', 'k2', 'u', 'i', 'field k', 'field k format 6 decoded', 'field k format 6 bytes', 'field k format 5 bytes', 'field k format 4 decoded', 'field u', 'field i', 'field 4', 'field x', 'field in memory', 'raw t', 'raw j', 'raw in memory']) t.ok(encodings.has(e), `blocks with ${e} columns`);
});

t.test('text columns left unread (seen-bytes.ts) and regexes decided by field values: Kelvin sign, matches across cuts', async (t) => {
  // `note` holds `k` only as the Kelvin sign (which folds to it); `msg` ends in part of a match that
  // the raw string completes past the value in every fifth row (`...Time` + `out`), and is glued to
  // a word of the regex's own characters in every seventh (`failed: ` + `Deadlock` before it).
  const kinds = ['Timeout', 'Deadlock', 'Other', 'Time'];
  const evs: Raw[] = Array.from({ length: 400 }, (_, i) => {
    const note = `\u212Aelvin${i * 7919}`;
    const msg = `request failed: ${kinds[i % 4]!}`;
    const raw = i % 5 === 0 ? `t=${i} msg=${msg}out n=${note}` : i % 7 === 0 ? `t=${i} Deadlock${msg} n=${note}` : `t=${i} msg="${msg}" n=${note} id=${(i * 2654435761) % 4294967296}`;
    return { ts: 1_000_000 + i, raw, fields: { note, msg, id: String((i * 2654435761) % 4294967296) }, off: i };
  });
  const queries = ['kelvin3 | count()', '"KELVIN7" | count()', '/request failed: (Timeout|Deadlock)/ | count()', '/failed: (Time|Dead)/ | count()', '/Deadlock(request|failed)/ | count()', '/request failed: (Timeout|Deadlock)/i | count()', 'failed | count()'];
  for (const format of [6, 5] as const) {
    const view = block(evs, format);
    t.equal(view.encoding('note'), 'u', `format ${format}: note is a UTF-8 text column`);
    t.ok(view.template() !== null, `format ${format}: raw strings are templates`);
    const seen = new SeenBytesCache();
    view.seen = seen.block('p', format, 0);
    // Its first gap (`t=<i> ...`) has a value per row, a text column: no template head is kept.
    view.templateHead = new TemplateHeads().block('p', format, 0);
    const made = unreadCounts.made;
    const byValues = decidedByValues.rows;
    for (let pass = 0; pass < 2; pass++) {
      for (const text of queries) {
        const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
        t.equal(count(q, [evs], [view], true), oracle(q, [evs]), `format ${format}, pass ${pass}, ${text}`);
      }
    }
    t.ok(unreadCounts.made > made, `format ${format}: columns left unread`);
    t.equal(view.templateHead.head, undefined, `format ${format}: a gap that is no dictionary keeps no template head`);
    t.ok(decidedByValues.rows > byValues, `format ${format}: rows decided by their field values`);
  }
  t.same(regexAlphabet('a(b|c)d+', ''), new Set([97, 98, 99, 100]));
  t.same(regexAlphabet('ab', 'i'), new Set([97, 65, 98, 66]));
  for (const src of ['a.b', 'a[bc]', 'a\\db', '^ab', 'ab$', '(?=a)b', '(?i)ab', 'a\\bc']) t.equal(regexAlphabet(src, ''), null, src);
  t.equal(regexAlphabet('straße', 'i'), null);
  t.same(regexAlphabet('x{2,3}\\.', ''), new Set([120, 46]));
});

t.test('dictionaries of more than 64 entries left unread by their entries\' bytes (seen-bytes.ts), read after all for cuts and regexes', async (t) => {
  // `zone` (97 values, a dictionary too large for the head's summary) holds no `f`, `k` or `x`;
  // in every third row the raw string glues it to what follows (`zone17x...`), so a needle that
  // begins in the value ends past it.
  const evs: Raw[] = Array.from({ length: 600 }, (_, i) => {
    const zone = `zone${i % 97}`;
    const raw = i % 3 === 0 ? `t=${i} z=${zone}xkf ok` : `t=${i} z=${zone} failed${i % 5}`;
    return { ts: 1_000_000 + i, raw, fields: { zone }, off: i };
  });
  const queries = ['failed | count()', 'xkf | count()', '"17xk" | count()', '"ne3xkf" | count()', '/one4[0-9]x/ | count()', '/zone1/ | count()', 'zone5 | count()', 'failed3 | count()'];
  for (const format of [6, 5] as const) {
    const view = block(evs, format);
    t.equal(view.encoding('zone'), 'k', `format ${format}: zone is a dictionary`);
    t.not(view.columnRead('zone')?.dict, undefined, `format ${format}: its entries are in its frame`);
    view.seen = new SeenBytesCache().block('p', format, 0);
    const before = { ...unreadCounts };
    for (let pass = 0; pass < 2; pass++) {
      for (const text of queries) {
        const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
        const want = oracle(q, [evs]);
        t.not(want, '[[["_count","0"]]]', `${text} matches some rows`);
        t.equal(count(q, [evs], [view], true), want, `format ${format}, pass ${pass}, ${text}`);
      }
    }
    t.ok(unreadCounts.dicts > before.dicts, `format ${format}: ${unreadCounts.dicts - before.dicts} dictionaries left unread`);
    t.ok(unreadCounts.read > before.read, `format ${format}: read after all for a match across a cut or a regex`);
  }
});

t.test('walks across template cuts start at the first piece that may carry; a text column without the first unit ends no partial match', async (t) => {
  // An access log: `POST /api/v2/orders/` runs from the method across a gap into the url, with
  // fields before and after them; `msg` (many values: a UTF-8 text column) holds `F` but never
  // `f`, and ends in `...FAIL` that the gap after it completes to `FAILED` in every third row.
  const methods = ['GET', 'POST', 'PUT', 'POS'];
  const evs: Raw[] = Array.from({ length: 600 }, (_, i) => {
    const method = methods[i % 4]!;
    const url = i % 3 === 0 ? `/api/v2/orders/${100000 + i * 7}/cancel` : i % 3 === 1 ? `/api/v2/orders` : `/api/v2/orders/${i}`;
    const msg = `R${i * 7919} ${i % 2 === 0 ? 'FAIL' : 'OK'}`;
    const client = `10.0.${i % 7}.${i % 250}`;
    const raw = `${client} - [${i}] "${method} ${url} HTTP/1.1" ${i % 5} ${msg}${i % 3 === 0 ? 'ED' : ''} rt=${i % 11}`;
    return { ts: 1_000_000 + i, raw, fields: { client, method, url, msg }, off: i };
  });
  const queries = ['/POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel/ | count()', 'method=POST | /POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel/ | count()', 'msg=*OK* | /POST \\/api\\/v2\\/orders\\/\\d+/ | count()', '"POST /api/v2/orders/" | count()', '"POS /api" | count()', 'failed | count()', '/FAILED rt/ | count()', '"failed rt=1" | count()', '/^POST \\/api\\/v2\\/orders\\// | count()', '/POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel$/m | count()', '/POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel\\b/ | count()'];
  for (const format of [6, 5] as const) {
    const view = block(evs, format);
    t.equal(view.encoding('msg'), 'u', `format ${format}: msg is a UTF-8 text column`);
    t.ok(view.template() !== null, `format ${format}: raw strings are templates`);
    const walks = { ...walkCounts };
    for (const text of queries) {
      const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
      const want = oracle(q, [evs]);
      if (!text.includes('^') && !text.includes('$')) t.not(want, '[[["_count","0"]]]', `${text} matches some rows`);
      t.equal(count(q, [evs], [view], true), want, `format ${format}, ${text}`);
    }
    t.ok(walkCounts.skipped > walks.skipped, `format ${format}: pieces passed over`);
    t.ok(walkCounts.bySpan > walks.bySpan, `format ${format}: regexes matched in the pieces holding their literal`);
  }
  const local = (src: string): boolean => regexLocal(new RegExp(src));
  for (const src of ['a[0-9]+b', 'a(?:b|c)', '(?<n>ab)c', 'a[$^]', 'a[\\b]', 'a\\$', 'a\\^', 'a[]]']) t.ok(local(src), `/${src}/ is local`);
  for (const src of ['^ab', 'ab$', 'a\\bc', 'a\\Bc', '(?=a)b', '(?!a)b', '(?<=a)b', '(?<!a)b', 'a[x]$']) t.notOk(local(src), `/${src}/ is not local`);
  t.notOk(regexLocal(/ab/g), 'a global regex is not local');
});

t.test('raw template heads kept between searches: the raw column read only for gaps holding the needle, cuts and regexes', async (t) => {
  // Every gap a dictionary (`level=`, ` msg=`, ` user=`, and ` n=` or ` note=` by layout); `msg`
  // ends in `ok` in every fourth row, so `"ok user"` crosses from the value into the gap after it.
  const evs: Raw[] = Array.from({ length: 500 }, (_, i) => {
    const level = ['INFO', 'WARN', 'ERROR'][i % 3]!;
    const msg = i % 4 === 0 ? `job ${i} ok` : `job ${i} failed on ${i % 7}`;
    const user = `u${i % 13}`;
    const last = i % 2 === 0 ? { n: String(i) } : { note: `x${i % 5}` };
    const raw = `level=${level} msg=${msg} user=${user}${'n' in last ? ` n=${last.n}` : ` note=${last.note}`}`;
    return { ts: 1_000_000 + i, raw, fields: { level, msg, user, ...last }, off: i };
  });
  const queries: [string, 'unread' | 'read'][] = [
    ['failed | count()', 'unread'],
    ['"job 12" | count()', 'unread'],
    ['msg | count()', 'read'],
    ['"ok user" | count()', 'read'],
    ['"note=x3" | count()', 'read'],
    ['/failed on [0-3] user=u1/ | count()', 'read'],
    ['Error | count()', 'unread'],
    ['/FAILED/i | groupBy(level)', 'unread'],
  ];
  for (const format of [6, 5] as const) {
    const view = block(evs, format);
    t.ok(view.template() !== null, `format ${format}: raw strings are templates`);
    const heads = new TemplateHeads();
    view.templateHead = heads.block('p', format, 0);
    for (let pass = 0; pass < 2; pass++) {
      for (const [text, raw] of queries) {
        const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
        const want = oracle(q, [evs]);
        t.not(want, '[[["_count","0"]]]', `${text} matches some rows`);
        const before = { ...keptTemplates };
        t.equal(count(q, [evs], [view], true), want, `format ${format}, pass ${pass}, ${text}`);
        if (pass === 0 && text === queries[0]![0]) continue; // the first search makes the head
        t.equal(keptTemplates.searched - before.searched, 1, `format ${format}, pass ${pass}, ${text}: searched from the kept head`);
        t.equal(keptTemplates.read - before.read, raw === 'read' ? 1 : 0, `format ${format}, pass ${pass}, ${text}: raw column ${raw}`);
      }
    }
    t.equal(heads.size.blocks, 1, `format ${format}: one head kept`);
  }
});

t.test('free text over format 6 blocks finds values of a dictionary whose entries are in the head', async (t) => {
  // A small dictionary field (its entries in the head's summary, its frame holding the codes only)
  // whose values no raw string holds: only the field's entries can match.
  const evs: Raw[] = Array.from({ length: 300 }, (_, i) => ({ ts: 1_000_000 + i, raw: `event ${i} done`, fields: { level: ['alpha-warn', 'Beta-Err', 'gamma'][i % 3]!, n: String(i) }, off: i }));
  for (const format of [6, 5, 4] as const) {
    const view = block(evs, format);
    t.equal(view.encoding('level'), 'k', `format ${format}: level is a dictionary column`);
    t.equal(view.columnBytes('level') === null, format !== 5, `format ${format}: its bytes ${format === 5 ? 'walked in place' : 'decoded'}`);
    for (const text of ['"beta-err" | count()', 'ta-e | count()', '/A-W/i | count()', '/Beta-E+rr$/ | count()', 'alpha or gamma | count()', '"-err" n>150 | count()']) {
      const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
      const want = oracle(q, [evs]);
      t.not(want, JSON.stringify([[['_count', '0']]]), `${text}: some rows match`);
      t.equal(count(q, [evs], [view], true), want, `format ${format}, ${text}: column path`);
      t.equal(count(q, [evs], [view], false), want, `format ${format}, ${text}: per event`);
    }
  }
});

t.test('a required literal is in every match; an exact literal is the whole pattern', async (t) => {
  const r = rnd(77);
  const evs = events(r, 200, 0);
  const texts = evs.flatMap((e) => [e.raw, ...Object.values(e.fields)]);
  let withLiteral = 0;
  let exact = 0;
  for (let k = 0; k < 400; k++) {
    const lit = regexOf(r, evs);
    const close = lit.lastIndexOf('/');
    const source = lit.slice(1, close);
    const flags = lit.slice(close + 1);
    let re: RegExp;
    try {
      re = compileRegex(source, flags, (m) => {
        throw new Error(m);
      }).re;
    } catch {
      continue;
    }
    const got = regexLiteral(source, flags);
    if (got === null) continue;
    withLiteral++;
    if (got.exact) exact++;
    const nd = new Needle(got.text, got.folded);
    for (const s of texts) {
      const m = re.test(s);
      const has = got.folded ? fold(s).includes(fold(got.text)) : s.includes(got.text);
      if (m && !has) t.fail(`/${source}/${flags} matches ${JSON.stringify(s)} without its literal ${JSON.stringify(got.text)}`);
      if (got.exact && m !== has) t.fail(`/${source}/${flags} called exact: ${m} vs contains ${has} on ${JSON.stringify(s)}`);
      if (nd.inside(s) !== has) t.fail(`needle ${JSON.stringify(got.text)} (folded ${got.folded}) inside ${JSON.stringify(s)}: ${!has}`);
    }
  }
  t.ok(withLiteral > 200, `${withLiteral} patterns with a literal`);
  t.ok(exact > 20, `${exact} exact`);
});

t.test('regexLiteral on hand-picked patterns', async (t) => {
  const cases: [string, string, ReturnType<typeof regexLiteral>][] = [
    ['GET \\/products', '', { text: 'GET /products', folded: false, exact: true }],
    ['GET \\/products', 'i', { text: 'GET /products', folded: true, exact: false }],
    ['ab?cdef', '', { text: 'cdef', folded: false, exact: false }],
    ['abc+de', '', { text: 'abc', folded: false, exact: false }],
    ['x{0,3}yz', '', { text: 'yz', folded: false, exact: false }],
    ['ab{2}c', '', { text: 'ab', folded: false, exact: false }],
    ['a|b', '', null],
    ['(a|b)cd', '', { text: 'cd', folded: false, exact: false }],
    ['\\d+ms', '', { text: 'ms', folded: false, exact: false }],
    ['\\x41BC', '', { text: 'BC', folded: false, exact: false }],
    ['[abc]', '', null],
    ['straße', 'i', { text: 'stra', folded: true, exact: false }],
    ['straße', '', { text: 'straße', folded: false, exact: true }],
    ['^abc$', '', { text: 'abc', folded: false, exact: false }],
  ];
  for (const [src, flags, want] of cases) t.same(regexLiteral(src, flags), want, `/${src}/${flags}`);
});

t.test('percentile: column path = per-event path (exact values and sketches, dictionary, integer and text columns)', async (t) => {
  const r = rnd(95);
  let checked = 0;
  // Blocks small and large: the state stays exact (up to 5000 values) or becomes a sketch in one block or on merging.
  for (const sizes of [[50, 80], [3000, 2500], [6000], [200, 5200, 10]]) {
    const blocks = sizes.map((n, b) => events(r, n, 1_000_000 + b * 10_000_000));
    const views = blocks.map((evs) => block(evs));
    for (const text of ['percentile(rt, percentiles=[50, 95, 99])', 'percentile(size)', 'percentile(url)', 'status=404 | percentile(rt)', 'percentile(client, percentiles=[10])', '"Mac OS" | percentile(size, percentiles=[99.9])']) {
      const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 1e15 }) });
      const want = oracle(q, blocks);
      const perEvent = count(q, blocks, views, false);
      const columns = count(q, blocks, views, true);
      t.equal(perEvent, want, `${text} over ${sizes.join('+')} rows: per event`);
      t.equal(columns, want, `${text} over ${sizes.join('+')} rows: column path`);
      checked++;
    }
  }
  t.equal(checked, 24);
});
