/**
 * The native block builder (native/block_builder.cc) against the JavaScript one: wherever it takes
 * a block it must build the same bytes (body, filters, header), over seeded random blocks that
 * reach every column encoding, with ASCII and non-ASCII text (astral characters, letters whose
 * lower case is not one unit) and more columns than a template places; it must decline what it
 * does not take (old record versions, names needing escapes, a string boundary inside a surrogate
 * pair, more than 4096 columns), and it must never crash on a damaged section (declining or
 * agreeing with the JavaScript builder).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { buildBlock, buildBlockInJs, type BlockPart } from '../../../src/digest/block-parts.js';
import { nativeBlockBuilder, nativeBlockUnavailable } from '../../../src/digest/native-block.js';
import { encodeRecord, groupSection, type IngestEvent } from '../../../src/events/index.js';
import { assembleBlock, decodeBlockEvents, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import { wholeBody } from '../../../src/segments/frames.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { rnd } from '../../helpers/random.js';

if (nativeBlockBuilder === null) {
  // Built by `npm run build` on any machine with a C++ compiler; only LOGSVC_NATIVE=off turns it off.
  t.equal(process.env.LOGSVC_NATIVE, 'off', `the native block builder is missing: ${nativeBlockUnavailable}`);
  t.end();
} else {
  const native = nativeBlockBuilder;

  const section = (evs: IngestEvent[]): Uint8Array => {
    const { payload, summary } = encodeRecord({ repo: 'r', at: 1, groups: [{ ds: 'd', tags: {}, events: evs }] });
    return new Uint8Array(groupSection(payload, summary, 0));
  };

  /** Native bytes, or null when it declines; the JavaScript bytes of the same parts. */
  const both = (parts: BlockPart[]): { native: Buffer | null; js: Buffer } => {
    const content = native.build(parts);
    return { native: content === null ? null : assembleBlock(content, lz4Codec), js: buildBlockInJs(parts) };
  };

  const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD'];
  const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'x1', 'Q', '', 'Mixed_Case-99', 'a b c', '007'];
  /** Non-ASCII: Latin-1, Greek capitals, an astral emoji, letters whose lower case is two units (İ) or none (ẞ keeps its own), CJK. */
  const UNICODE = ['grüße', 'ΣΊΣΥΦΟΣ', '🎉party', 'İstanbul', 'STRAẞE', '日本語のログ', 'é', 'naïve café', 'Ωmega', '𝔘𝔫𝔦'];

  /** Random ASCII events whose fields reach dictionaries (both widths), integers, IPv4, text, references, templates and plain raw strings. */
  interface Shape {
    extraColumns: number;
    templated: boolean;
    /** A column of ~300 distinct values (a two-byte dictionary in a block of 1,200+ events). */
    manyDistinct: boolean;
    /** Now and then a value that is not a canonical integer or address (plain text columns instead). */
    untyped: boolean;
    /** Words (and some field names) from UNICODE as well. */
    unicode: boolean;
  }

  function events(r: () => number, n: number, shape: Shape): IngestEvent[] {
    const out: IngestEvent[] = [];
    let ts = Math.floor(r() * 2e12) - 1e12;
    for (let i = 0; i < n; i++) {
      const f: Record<string, string> = {};
      if (r() < 0.9) f.method = METHODS[Math.floor(r() * METHODS.length)]!;
      // Present in every event, or the column cannot be typed.
      f.size = !shape.untyped || r() < 0.97 ? String(Math.floor(r() * 1e6) - (r() < 0.1 ? 5e5 : 0)) : '0' + String(i);
      f.client = !shape.untyped || r() < 0.98 ? `${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}` : '10.0.0';
      const words = shape.unicode && r() < 0.5 ? UNICODE : WORDS;
      if (r() < 0.9) f.url = `/p/${Math.floor(r() * 1e9).toString(36)}/${words[Math.floor(r() * words.length)]}`;
      if (r() < 0.5) f.word = words[Math.floor(r() * words.length)]!;
      if (shape.unicode && r() < 0.3) f['größe'] = UNICODE[Math.floor(r() * UNICODE.length)]!;
      if (shape.manyDistinct) f.many = `v${Math.floor(r() * 300)}`;
      for (let c = 0; c < shape.extraColumns; c++) if (r() < 0.3) f[`c${c}`] = `e${Math.floor(r() * 50)}`;
      const placed = Object.values(f).filter(() => r() < 0.9);
      // Untemplated: the url sits in a long line of other text (references into the raw string).
      const raw = shape.templated
        ? placed.join(r() < 0.5 ? ' ' : ' "') + (r() < 0.3 ? ' tail' : '')
        : `free text ${Math.floor(r() * 1e6)} ${r() < 0.9 ? (f.url ?? '') : 'elsewhere'} ${'-='.repeat(60)} ${words[i % words.length]}`;
      // Mostly rising integers; now and then a fraction or a jump past 2^51 (plain f64 columns).
      ts += r() < 0.01 ? 0.5 : r() < 0.005 ? 2 ** 52 : Math.floor(r() * 100);
      out.push({ timestamp: ts, timezone: r() < 0.9 ? 'Z' : '+02:00', rawstring: raw, fields: f });
    }
    return out;
  }

  /** Every column encoding in a block body ("k1"/"k2" for the dictionary widths). */
  const encodingsOf = (block: Buffer, into: Set<string>): void => {
    const m = readBlockMeta(block, 0)!;
    const body = wholeBody(encodedBlockAt(block, 0, m, lz4Codec));
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
        const o = v as Record<string, unknown>;
        if (typeof o.e === 'string') into.add(o.e === 'k' ? `k${String(o.w)}` : o.e);
        Object.values(o).forEach(walk);
      }
    };
    walk(body);
  };

  t.test('seeded random blocks: the native builder makes the JavaScript builder\'s bytes', async (t) => {
    let compared = 0;
    let declined = 0;
    const seen = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const r = rnd(seed);
      const shape: Shape = { extraColumns: seed % 5 === 0 ? 40 : seed % 7 === 0 ? 70 : 0, templated: seed % 3 !== 0, manyDistinct: seed % 4 === 0, untyped: seed % 2 === 0, unicode: seed % 3 !== 1 };
      const partCount = shape.manyDistinct ? 3 : 1 + Math.floor(r() * 4);
      const parts: BlockPart[] = [];
      for (let p = 0; p < partCount; p++) {
        const evs = events(r, shape.manyDistinct ? 400 + Math.floor(r() * 400) : 1 + Math.floor(r() * 300), shape);
        parts.push({ events: section(evs), offset: p * 4096 + seed, base: Math.floor(r() * 10), skip: r() < 0.3 ? Math.floor(r() * evs.length) : 0, at: 1_700_000_000_000 + p });
      }
      const { native: n, js } = both(parts);
      if (n === null) {
        declined++;
        t.fail(`seed ${seed}: declined`);
        continue;
      }
      compared++;
      encodingsOf(js, seen);
      if (!n.equals(js)) t.fail(`seed ${seed}: native bytes differ from JavaScript's (${n.length} vs ${js.length})`);
    }
    t.equal(compared, 60, `${compared} blocks compared, ${declined} declined`);
    t.strictSame([...seen].sort(), ['4', 'd', 'f', 'i', 'j', 'k1', 'k2', 'r', 't', 'u', 'x'], 'the blocks compared reach every encoding the builders write');
  });

  t.test('non-ASCII text and more than 64 columns are built natively', async (t) => {
    const e: IngestEvent = { timestamp: 1, timezone: 'Z', rawstring: 'grüße 🎉 ΣΊΣΥΦΟΣ', fields: { 'größe': 'grüße', ...Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`f${i}`, `v${i}`])) } };
    const parts: BlockPart[] = [{ events: section([e, { ...e, rawstring: 'İstanbul grüße' }]), offset: 0, base: 0, skip: 0, at: 1 }];
    const { native: n, js } = both(parts);
    t.ok(n !== null && n.equals(js), 'taken, and the same bytes');
  });

  // ASCII text takes its own token and gram pass (indexAscii): every ASCII unit (controls,
  // punctuation, both cases), tokens past the 64 units a token hashes, word runs of 1 to 5 units
  // (grams start at 4), in a block of ASCII only and in one where a non-ASCII value sends the
  // block's other texts through the per-value check.
  t.test('ASCII text of every unit, long tokens and short runs: the JavaScript builder\'s filters', async (t) => {
    const every = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const r = rnd(7);
    const word = (n: number): string => Array.from({ length: n }, () => 'aZ9_q'[Math.floor(r() * 5)]).join('');
    const evs = (unicode: boolean): IngestEvent[] =>
      Array.from({ length: 200 }, (_, i) => {
        const runs = Array.from({ length: 6 }, (_, k) => word(1 + ((i + k) % 5))).join(i % 2 === 0 ? ' ' : '.');
        const long = word(60 + (i % 10));
        const fields: Record<string, string> = { every: every.slice(i % 127), runs, long, id: `${long}${i}` };
        if (unicode && i % 50 === 0) fields.u = UNICODE[i % UNICODE.length]!;
        return { timestamp: i, timezone: 'Z', rawstring: `${runs} ${every.slice(0, i % 127)} ${long}`, fields };
      });
    for (const unicode of [false, true]) {
      const { native: n, js } = both([{ events: section(evs(unicode)), offset: 0, base: 0, skip: 0, at: 1 }]);
      t.ok(n !== null && n.equals(js), `${unicode ? 'with' : 'without'} non-ASCII values: taken, and the same bytes`);
    }
  });

  // JSON events of a few shapes, interleaved as a JSON log's services interleave: the template's
  // layouts alternate from event to event, a shape's gaps repeat those of its last event (or not:
  // a word joined to a value, a spacing that differs), and some raw strings are not clean.
  t.test('interleaved JSON shapes: the native builder makes the JavaScript builder\'s bytes', async (t) => {
    for (let seed = 1; seed <= 12; seed++) {
      const r = rnd(1000 + seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const evs: IngestEvent[] = [];
      for (let i = 0; i < 200 + Math.floor(r() * 300); i++) {
        const shape = Math.floor(r() * 4);
        const attrs: Record<string, unknown> =
          shape === 0
            ? { level: pick(['INFO', 'WARN']), service: pick(['api', 'db', 'web']), trace: { id: Math.floor(r() * 1e9).toString(16) }, message: `GET ${pick(['200', '404'])} in ${Math.floor(r() * 100)} ms` }
            : shape === 1
              ? { level: pick(['DEBUG', 'INFO']), user: { id: String(Math.floor(r() * 1000)), name: pick(['bob', 'ann', 'zoë']) }, message: pick(['committed', 'rolled back', 'grüße']) }
              : shape === 2
                ? { service: pick(['api', 'web']), http: { path: `/p/${Math.floor(r() * 50)}`, status: pick(['200', '500']) } }
                : { level: 'ERROR', message: `${pick(['disk', 'net'])} failed`, code: pick(['E1', 'E22', 'E333']) };
        let raw = JSON.stringify(attrs);
        if (r() < 0.1) raw = raw.replace('":"', '": "');
        if (r() < 0.05) raw = `x${raw}`;
        const fields: Record<string, string> = {};
        const flat = (o: Record<string, unknown>, prefix: string): void => {
          for (const [k, v] of Object.entries(o)) {
            if (typeof v === 'object' && v !== null) flat(v as Record<string, unknown>, `${prefix}${k}.`);
            else fields[`${prefix}${k}`] = String(v);
          }
        };
        flat(attrs, '');
        evs.push({ timestamp: 1_714_982_400_000 + i, timezone: 'Z', rawstring: raw, fields });
      }
      const { native: n, js } = both([{ events: section(evs), offset: seed, base: 0, skip: 0, at: 1 }]);
      t.ok(n !== null && n.equals(js), `seed ${seed}: taken, and the same bytes`);
    }
  });

  t.test('the native block reads back as the events that went in', async (t) => {
    const evs = events(rnd(99), 200, { extraColumns: 0, templated: true, manyDistinct: false, untyped: true, unicode: true });
    const block = buildBlock([{ events: section(evs), offset: 7, base: 0, skip: 0, at: 5 }]);
    t.ok(native.build([{ events: section(evs), offset: 7, base: 0, skip: 0, at: 5 }]) !== null, 'precondition: built natively');
    const back = decodeBlockEvents(block, 0, readBlockMeta(block, 0)!, lz4Codec);
    t.strictSame(
      back.map((e) => ({ timestamp: e.timestamp, timezone: e.timezone, rawstring: e.rawstring, fields: e.fields })),
      evs,
    );
  });

  t.test('declines what it does not take, and the JavaScript builder builds it', async (t) => {
    const ascii: IngestEvent = { timestamp: 1, timezone: 'Z', rawstring: 'GET /a 200', fields: { method: 'GET' } };
    const cases: [string, Uint8Array][] = [
      ['a field name that JSON escapes', section([{ ...ascii, fields: { 'a"b': '1' } }])],
      ['a version 2 section', Buffer.from(JSON.stringify({ n: 1, ts: [1], tz: ['Z'], raw: ['x'], names: [], cols: [] }))],
      ['a version 1 section', Buffer.from(JSON.stringify([[1, 'Z', 'x', {}]]))],
      // The zone ends in a high surrogate and the raw string starts with the low one: joined they
      // are one character in UTF-8, cut apart they are two lone halves.
      ['a string boundary inside a surrogate pair', section([{ ...ascii, timezone: 'Z\ud83c', rawstring: '\udf89 party' }])],
      ['4097 columns', section([{ ...ascii, fields: Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`f${i}`, 'v'])) }])],
    ];
    for (const [what, events] of cases) {
      const parts: BlockPart[] = [{ events, offset: 0, base: 0, skip: 0, at: 1 }];
      t.equal(native.build(parts), null, `${what}: declined`);
      t.ok(buildBlock(parts).equals(buildBlockInJs(parts)), `${what}: built in JavaScript`);
    }
    t.equal(native.build([{ events: section([ascii]), offset: 0, base: 0, skip: 1, at: 1 }]), null, 'an empty block: declined (the JavaScript builder refuses it)');
    for (const skip of [1e30, -1, 0.5, Number.NaN]) t.equal(native.build([{ events: section([ascii]), offset: 0, base: 0, skip, at: 1 }]), null, `skip ${skip}: declined`);
    t.equal(native.build([{ events: section([ascii]), offset: 'x', base: 0, skip: 0, at: 1 } as unknown as BlockPart]), null, 'a part whose offset is not a number: declined');
    t.throws(() => native.build('nope' as unknown as BlockPart[]), TypeError, 'parts that are not an array: a TypeError');

    // Damage only a crafted section has: declined, and the JavaScript builder refuses or reads it.
    const two = Buffer.from(section([{ ...ascii, fields: { a: '1', b: '2' } }]));
    const names = two.indexOf('["a","b"]');
    two.write('["a","a"]', names);
    t.equal(native.build([{ events: two, offset: 0, base: 0, skip: 0, at: 1 }]), null, 'a repeated field name: declined');
    t.throws(() => buildBlockInJs([{ events: two, offset: 0, base: 0, skip: 0, at: 1 }]), { code: 'E_STATE_CORRUPT' }, 'a repeated field name: corrupt for JavaScript');
    const nan = Buffer.from(section([ascii]));
    const tsAt = 9 + nan.readUInt32LE(5);
    Buffer.from([1, 0, 0, 0, 0, 0, 0xf0, 0x7f]).copy(nan, tsAt); // a signalling NaN
    t.equal(native.build([{ events: nan, offset: 0, base: 0, skip: 0, at: 1 }]), null, 'a NaN timestamp: declined');
    t.ok(buildBlockInJs([{ events: nan, offset: 0, base: 0, skip: 0, at: 1 }]).length > 0, 'a NaN timestamp: built in JavaScript');
    // Columns are padded to the block's length: 1,000 columns over 70,001 events is past the bound
    // (the JavaScript builder is not run here: it would pad them all).
    const many = section(Array.from({ length: 70_000 }, () => ({ timestamp: 1, timezone: 'Z', rawstring: '', fields: {} })));
    const wide = section([{ ...ascii, fields: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, 'v'])) }]);
    t.equal(native.build([{ events: many, offset: 0, base: 0, skip: 0, at: 1 }, { events: wide, offset: 1, base: 0, skip: 0, at: 1 }]), null, 'columns x events past the bound: declined');
  });

  t.test('a damaged section never crashes it: it declines, or builds what JavaScript builds', async (t) => {
    const evs = events(rnd(7), 30, { extraColumns: 0, templated: true, manyDistinct: false, untyped: false, unicode: true });
    const good = Buffer.from(section(evs));
    const r = rnd(8);
    const damaged: Buffer[] = [];
    for (let cut = 0; cut < good.length; cut += 3) damaged.push(good.subarray(0, cut));
    for (let k = 0; k < 300; k++) {
      const b = Buffer.from(good);
      const at = Math.floor(r() * b.length);
      b[at] = b[at]! ^ (1 << Math.floor(r() * 8));
      damaged.push(b);
    }
    let agreed = 0;
    for (const events of damaged) {
      const parts: BlockPart[] = [{ events, offset: 0, base: 0, skip: 0, at: 1 }];
      const content = native.build(parts);
      if (content === null) continue;
      agreed++;
      t.ok(assembleBlock(content, lz4Codec).equals(buildBlockInJs(parts)), 'accepted damage is read exactly as JavaScript reads it');
    }
    t.ok(agreed > 0, `some flips leave a valid section (${agreed} built)`);
  });
}

t.test('LOGSVC_NATIVE=off turns the native builder off, and says so', async (t) => {
  const script = `import('${new URL('../../../src/digest/native-block.ts', import.meta.url).href}').then((m) => console.log(JSON.stringify([m.nativeBlockBuilder === null, m.nativeBlockUnavailable])))`;
  const r = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { env: { ...process.env, LOGSVC_NATIVE: 'off' }, encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 0, r.stderr);
  t.strictSame(JSON.parse(r.stdout.trim().split('\n').pop()!), [true, 'LOGSVC_NATIVE=off']);
});
