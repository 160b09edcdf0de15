import t from 'tap';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'smol-toml';
import { OPTIONS, buildConfig, loadConfig } from '../../../src/config/index.js';

const EXAMPLE = fileURLToPath(new URL('../../../cluster.example.toml', import.meta.url));

function flat(raw: Record<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [section, table] of Object.entries(raw)) {
    if (typeof table !== 'object' || table === null || Array.isArray(table)) {
      out.set(section, table);
      continue;
    }
    for (const [key, value] of Object.entries(table)) out.set(`${section}.${key}`, value);
  }
  return out;
}

t.test('cluster.example.toml parses and passes validation', async (t) => {
  const text = await readFile(EXAMPLE, 'utf8');
  const raw = parse(text) as Record<string, unknown>;
  const { config, problems } = buildConfig(raw);
  t.strictSame(problems, []);
  t.strictSame(config, buildConfig({}).config, 'the file yields exactly the defaults');
  t.strictSame(await loadConfig(EXAMPLE), buildConfig({}).config, 'loadConfig accepts it too');
});

t.test('cluster.example.toml documents every option, and nothing else, with its default', async (t) => {
  const raw = parse(await readFile(EXAMPLE, 'utf8')) as Record<string, unknown>;
  const given = flat(raw);
  const known = new Set(OPTIONS.map((o) => o.path));
  t.strictSame([...given.keys()].filter((k) => !known.has(k)), [], 'no keys that are not options');
  t.strictSame([...known].filter((k) => !given.has(k)), [], 'no options missing from the file');
  for (const o of OPTIONS) {
    t.strictSame(given.get(o.path), o.default, `${o.path} = ${JSON.stringify(o.default)}`);
  }
  t.strictSame(Object.keys(raw), [...new Set(OPTIONS.map((o) => o.path.split('.')[0]))], 'sections in the order of the option table');
});

t.test('every key in cluster.example.toml is preceded by a comment line', async (t) => {
  const lines = (await readFile(EXAMPLE, 'utf8')).split('\n');
  let section = '';
  const seen: string[] = [];
  for (const [i, line] of lines.entries()) {
    const s = /^\s*\[([A-Za-z0-9_.]+)\]\s*$/.exec(line);
    if (s !== null) {
      section = s[1]!;
      continue;
    }
    const k = /^\s*([A-Za-z0-9_]+)\s*=/.exec(line);
    if (k === null) continue;
    const path = `${section}.${k[1]}`;
    seen.push(path);
    const prev = lines[i - 1] ?? '';
    t.match(prev, /^\s*#\s*\S/, `${path}: the line before it is a non-empty comment`);
  }
  t.strictSame(
    seen,
    OPTIONS.map((o) => o.path),
    'one key line per option, in table order',
  );
});

t.test("each key's comment carries the option's doc text", async (t) => {
  const lines = (await readFile(EXAMPLE, 'utf8')).split('\n');
  let section = '';
  for (const [i, line] of lines.entries()) {
    const s = /^\[([A-Za-z0-9_.]+)\]$/.exec(line);
    if (s !== null) section = s[1]!;
    const k = /^([A-Za-z0-9_]+)\s*=/.exec(line);
    if (k === null) continue;
    const opt = OPTIONS.find((o) => o.path === `${section}.${k[1]}`)!;
    const comment = (lines[i - 1] ?? '').replace(/^#\s*/, '');
    // The comment may add detail (units, the allowed values) after the doc text.
 t.ok(comment.startsWith(opt.doc), `${opt.path}: "${comment}" starts with the doc "${opt.doc}"`);
  }
});
