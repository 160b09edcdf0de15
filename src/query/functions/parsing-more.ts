/**
 * More parsing functions (query-functions.md §1 category parsing): parseInt, parseCsv,
 * parseFixedWidth, parseUri, parseUrl, parseXml (fast-xml-parser's home), parseCEF, parseLEEF and
 * findTimestamp. Each reads one field (default @rawstring), sets fields and always emits, unless the
 * product drops the event (parseXml strict=true on invalid XML). Inputs are capped at
 * MAX_PARSE_CHARS characters so a parse of one event is bounded.
 */
import { createRequire } from 'node:module';
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { fieldName, oneOf, setter } from './define.js';
import type { FnDef } from './types.js';
import { eventZone, parseZone, wallToUtc, type Zone } from './zones.js';

export const MAX_PARSE_CHARS = 1024 * 1024;
const MAX_OUTPUT_FIELDS = 10_000;

function inputField(a: BoundArgs, def = '@rawstring'): string {
  return fieldName(a) ?? def;
}

// --- parseInt -------------------------------------------------------------------------------------

const parseInt: FnDef = {
  name: 'parseInt',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'radix', type: 'number', default: '16' },
    { name: 'endian', type: 'string', default: 'big' },
  ],
  stage(a) {
    const field = inputField(a);
    const as = a.string('as', field);
    const radix = a.number('radix', 16);
    if (!Number.isInteger(radix) || radix < 2 || radix > 36) a.fail('radix', 'parseInt: radix must be a whole number from 2 to 36');
    const little = oneOf(a, 'endian', ['big', 'little'] as const, 'big') === 'little';
    const digits = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, radix);
    return setter(as, (e) => {
      let s = e.get(field)?.trim().toLowerCase();
      if (s === undefined || s === '' || s.length > 1024) return undefined;
      if (radix === 16 && s.startsWith('0x')) s = s.slice(2);
      if (little) {
        // Little endian: the bytes (hex digit pairs) in reverse order.
        if (radix !== 16 || s.length % 2 !== 0) return undefined;
        s = s.match(/../g)!.reverse().join('');
      }
      let v = 0n;
      const r = BigInt(radix);
      for (const c of s) {
        const d = digits.indexOf(c);
        if (d < 0) return undefined;
        v = v * r + BigInt(d);
      }
      return v.toString();
    });
  },
};

// --- parseCsv / parseFixedWidth -------------------------------------------------------------------

/** One CSV line: fields split at `delim`, `"..."` quoting with `""` for a quote. */
export function csvLine(s: string, delim: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let v = '';
    if (s[i] === '"') {
      i++;
      for (;;) {
        const q = s.indexOf('"', i);
        if (q < 0) {
          v += s.slice(i);
          i = s.length;
          break;
        }
        v += s.slice(i, q);
        if (s[q + 1] === '"') {
          v += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      const next = s.indexOf(delim, i);
      if (next < 0) {
        out.push(v + s.slice(i));
        return out;
      }
      out.push(v + s.slice(i, next));
      i = next + delim.length;
    } else {
      const next = s.indexOf(delim, i);
      if (next < 0) {
        out.push(s.slice(i));
        return out;
      }
      out.push(s.slice(i, next));
      i = next + delim.length;
    }
    if (out.length >= MAX_OUTPUT_FIELDS) return out;
  }
}

const parseCsv: FnDef = {
  name: 'parseCsv',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'columns', type: 'fields', required: true },
    { name: 'delimiter', type: 'string', default: ',' },
    { name: 'trim', type: 'bool', default: 'false' },
    { name: 'excludeEmpty', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = inputField(a);
    const columns = a.list('columns')!;
    const delim = a.string('delimiter', ',');
    if (delim === '') a.fail('delimiter', 'parseCsv: delimiter must not be empty');
    const trim = a.bool('trim', false);
    const excludeEmpty = a.bool('excludeEmpty', false);
    return {
      run(e, emit) {
        const s = e.get(field);
        if (s !== undefined && s.length <= MAX_PARSE_CHARS) {
          const line = s.replace(/\r?\n$/, '');
          csvLine(line, delim).forEach((v, i) => {
            const c = columns[i];
            if (c === undefined) return;
            const x = trim ? v.trim() : v;
            if (excludeEmpty && x === '') return;
            e.set(c, x);
          });
        }
        emit(e);
      },
    };
  },
};

const parseFixedWidth: FnDef = {
  name: 'parseFixedWidth',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'columns', type: 'fields', required: true },
    { name: 'widths', type: 'numbers', required: true },
    { name: 'trim', type: 'bool', default: 'true' },
  ],
  stage(a) {
    const field = inputField(a);
    const columns = a.list('columns')!;
    const widths = a.numbers('widths', []);
    if (widths.length !== columns.length) a.fail('widths', 'parseFixedWidth: give as many widths as columns');
    for (const w of widths) if (!Number.isInteger(w) || w < 1) a.fail('widths', 'parseFixedWidth: widths must be whole numbers, 1 or more');
    const trim = a.bool('trim', true);
    return {
      run(e, emit) {
        const s = e.get(field);
        if (s !== undefined) {
          let at = 0;
          columns.forEach((c, i) => {
            if (at >= s.length) return;
            const v = s.slice(at, at + widths[i]!);
            at += widths[i]!;
            e.set(c, trim ? v.trim() : v);
          });
        }
        emit(e);
      },
    };
  },
};

// --- parseUri / parseUrl --------------------------------------------------------------------------

interface UriParts {
  scheme?: string;
  username?: string;
  password?: string;
  host?: string;
  port?: string;
  path?: string;
  query?: string;
  fragment?: string;
}

/** RFC 3986 split (appendix B's expression), then the authority into user, password, host and port. */
export function splitUri(s: string): UriParts | null {
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s.exec(s);
  if (m === null) return null;
  const out: UriParts = {};
  if (m[1] !== undefined) out.scheme = m[1];
  if (m[2] !== undefined) {
    let auth = m[2];
    const at = auth.lastIndexOf('@');
    if (at >= 0) {
      const user = auth.slice(0, at);
      auth = auth.slice(at + 1);
      const colon = user.indexOf(':');
      out.username = colon < 0 ? user : user.slice(0, colon);
      if (colon >= 0) out.password = user.slice(colon + 1);
    }
    const v6 = /^(\[[^\]]*\])(?::(\d*))?$/.exec(auth);
    const plain = /^([^:]*)(?::(\d*))?$/.exec(auth);
    const hp = auth.startsWith('[') ? v6 : plain;
    if (hp === null) return null;
    out.host = hp[1]!;
    if (hp[2] !== undefined && hp[2] !== '') out.port = hp[2];
  }
  if (m[3] !== undefined && m[3] !== '') out.path = m[3];
  if (m[4] !== undefined) out.query = m[4];
  if (m[5] !== undefined) out.fragment = m[5];
  return out;
}

const parseUri: FnDef = {
  name: 'parseUri',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'prefix', type: 'string', default: '(the input field)' },
    { name: 'defaultBase', type: 'string' },
  ],
  stage(a) {
    const field = inputField(a);
    const prefix = a.string('prefix', field);
    if (prefix === '') a.fail('prefix', 'parseUri: prefix must not be empty');
    const base = a.string('defaultBase');
    if (base !== undefined && !/^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/$/.test(base)) a.fail('defaultBase', 'parseUri: defaultBase must be // or scheme://');
    return {
      run(e, emit) {
        const s = e.get(field);
        if (s !== undefined) {
          let p = splitUri(s);
          if (p !== null && p.host === undefined && base !== undefined && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s)) p = splitUri(base + s);
          if (p !== null && p.host !== undefined) {
            const set = (k: string, v: string | undefined): void => {
              if (v !== undefined && v !== '') e.set(`${prefix}.${k}`, v);
            };
            set('scheme', p.scheme);
            set('userinfo', p.username === undefined ? undefined : p.password === undefined ? p.username : `${p.username}:${p.password}`);
            set('hostname', p.host);
            set('port', p.port);
            set('path', p.path);
            set('query', p.query);
            set('fragment', p.fragment);
          }
        }
        emit(e);
      },
    };
  },
};

const parseUrl: FnDef = {
  name: 'parseUrl',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: 'url' },
    { name: 'as', type: 'string', default: '(the input field)' },
  ],
  stage(a) {
    const field = inputField(a, 'url');
    const prefix = a.string('as', field);
    return {
      run(e, emit) {
        const s = e.get(field);
        const p = s === undefined ? null : splitUri(s);
        if (p !== null) {
          for (const k of ['scheme', 'username', 'password', 'host', 'port', 'path', 'query', 'fragment'] as const) {
            const v = p[k];
            if (v !== undefined && v !== '') e.set(`${prefix}.${k}`, v);
          }
        }
        emit(e);
      },
    };
  },
};

// --- parseXml -------------------------------------------------------------------------------------

type Fxp = typeof import('fast-xml-parser');
const require = createRequire(import.meta.url);
let fxp: { parser: InstanceType<Fxp['XMLParser']>; validator: Fxp['XMLValidator'] } | null = null;

/**
 * fast-xml-parser, loaded when a query first uses parseXml (its one-file CommonJS build, the same
 * version): the parser and its entity tables stay out of an idle node's memory.
 */
function xmlLib(): { parser: InstanceType<Fxp['XMLParser']>; validator: Fxp['XMLValidator'] } {
  if (fxp === null) {
    const m = require('fast-xml-parser') as Fxp;
    fxp = {
      parser: new m.XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false, parseAttributeValue: false, trimValues: true, textNodeName: '#text', processEntities: true, htmlEntities: false }),
      validator: m.XMLValidator,
    };
  }
  return fxp;
}

function flattenInto(e: Ev, prefix: string, v: unknown, count: { n: number }): void {
  if (count.n >= MAX_OUTPUT_FIELDS) return;
  if (v === null || v === undefined) return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => flattenInto(e, `${prefix}[${i}]`, x, count));
    return;
  }
  if (typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === '#text') flattenInto(e, prefix, x, count);
      else flattenInto(e, prefix === '' ? k : `${prefix}.${k}`, x, count);
    }
    return;
  }
  if (prefix === '') return;
  count.n++;
  e.set(prefix, String(v));
}

const parseXml: FnDef = {
  name: 'parseXml',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'prefix', type: 'string', default: '' },
    { name: 'strict', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = inputField(a);
    const prefix = a.string('prefix', '');
    const strict = a.bool('strict', false);
    const { parser: xml, validator: XMLValidator } = xmlLib();
    return {
      run(e, emit) {
        const s = e.get(field);
        if (s === undefined) return emit(e);
        const start = s.indexOf('<');
        const text = start < 0 ? '' : s.slice(start);
        if (text === '' || text.length > MAX_PARSE_CHARS || XMLValidator.validate(text) !== true) {
          if (strict) return;
          e.set('@error', 'true');
          e.set('@error_msg', 'parseXml: the field is not valid XML');
          return emit(e);
        }
        const doc = xml.parse(text) as Record<string, unknown>;
        delete doc['?xml'];
        flattenInto(e, prefix, doc, { n: 0 });
        emit(e);
      },
    };
  },
};

// --- CEF and LEEF ---------------------------------------------------------------------------------

function unescapeCef(s: string, header: boolean): string {
  return s.replace(/\\(.)/g, (_m, c: string) => (c === 'n' && !header ? '\n' : c === 'r' && !header ? '\r' : c));
}

/** The header fields of `CEF:0|...` split at unescaped `|`, and the extension after the seventh. */
function splitHeader(s: string, n: number): { parts: string[]; rest: string } | null {
  const parts: string[] = [];
  let cur = '';
  let i = 0;
  while (i < s.length && parts.length < n) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += s.slice(i, i + 2);
      i += 2;
    } else if (c === '|') {
      parts.push(cur);
      cur = '';
      i++;
    } else {
      cur += c;
      i++;
    }
  }
  if (parts.length < n) return null;
  return { parts, rest: s.slice(i) };
}

/** CEF extension `k1=v1 k2=v with spaces k3=v3`: a value runs to the space before the next `key=`. */
export function cefExtension(s: string): [string, string][] {
  const out: [string, string][] = [];
  const re = /(?:^|\s)([\w.\-[\]]+)=/g;
  const keys: { k: string; start: number; end: number }[] = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    // An escaped `\=` inside a value is not a key.
    if (s[m.index + m[0].length - 2] === '\\') continue;
    keys.push({ k: m[1]!, start: m.index, end: m.index + m[0].length });
    if (keys.length >= MAX_OUTPUT_FIELDS) break;
  }
  keys.forEach((k, i) => {
    const next = keys[i + 1];
    const v = s.slice(k.end, next === undefined ? s.length : next.start);
    out.push([k.k, unescapeCef(v.trim(), false)]);
  });
  return out;
}

const parseCEF: FnDef = {
  name: 'parseCEF',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'headerprefix', type: 'string', default: 'cef.' },
    { name: 'prefix', type: 'string', default: 'cef.ext.' },
    { name: 'labelprefix', type: 'string', default: 'cef.label.' },
    { name: 'keeplabels', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = inputField(a);
    const hp = a.string('headerprefix', 'cef.');
    const xp = a.string('prefix', 'cef.ext.');
    const lp = a.string('labelprefix', 'cef.label.');
    const keep = a.bool('keeplabels', false);
    const names = ['version', 'device.vendor', 'device.product', 'device.version', 'event_class_id', 'name', 'severity'];
    return {
      run(e, emit) {
        const s = e.get(field);
        const at = s === undefined || s.length > MAX_PARSE_CHARS ? -1 : s.indexOf('CEF:');
        if (at >= 0) {
          const h = splitHeader(s!.slice(at + 4), 7);
          if (h !== null) {
            h.parts.forEach((p, i) => e.set(hp + names[i]!, unescapeCef(p, true)));
            const ext = cefExtension(h.rest);
            const labels = new Map<string, string>();
            for (const [k, v] of ext) if (k.endsWith('Label')) labels.set(k.slice(0, -'Label'.length), v);
            for (const [k, v] of ext) {
              if (!keep && k.endsWith('Label') && labels.has(k.slice(0, -5))) continue;
              const label = labels.get(k);
              if (!keep && label !== undefined) e.set(lp + label, v);
              else e.set(xp + k, v);
            }
          }
        }
        emit(e);
      },
    };
  },
};

const parseLEEF: FnDef = {
  name: 'parseLEEF',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'delimiter', type: 'string' },
    { name: 'headerprefix', type: 'string', default: 'leef.' },
    { name: 'prefix', type: 'string', default: 'leef.ext.' },
    { name: 'labelprefix', type: 'string', default: 'leef.label' },
    { name: 'keeplabels', type: 'bool', default: 'false' },
    { name: 'parsetime', type: 'bool', default: 'true' },
    { name: 'timezone', type: 'string', default: 'Z' },
  ],
  stage(a) {
    const field = inputField(a);
    const hp = a.string('headerprefix', 'leef.');
    const xp = a.string('prefix', 'leef.ext.');
    const given = a.string('delimiter');
    const parsetime = a.bool('parsetime', true);
    const tz = parseZone(a.string('timezone', 'Z')) ?? a.fail('timezone', `parseLEEF: unknown time zone ${a.string('timezone')}`);
    const names = ['version', 'vendor', 'product', 'product_version', 'event_id'];
    return {
      run(e, emit) {
        const s = e.get(field);
        const at = s === undefined || s.length > MAX_PARSE_CHARS ? -1 : s.indexOf('LEEF:');
        if (at >= 0) {
          const body = s!.slice(at + 5);
          const v2 = body.startsWith('2');
          const h = splitHeader(body, v2 ? 6 : 5);
          if (h !== null) {
            h.parts.slice(0, 5).forEach((p, i) => e.set(hp + names[i]!, p));
            let delim = given ?? '\t';
            if (v2 && given === undefined) {
              const d = h.parts[5] ?? '';
              delim = /^(?:0x|x)([0-9a-fA-F]{1,4})$/.test(d) ? String.fromCharCode(parseInt16(d)) : d === '' ? '\t' : d;
            }
            const attrs = h.rest.split(delim);
            for (const kv of attrs.slice(0, MAX_OUTPUT_FIELDS)) {
              const eq = kv.indexOf('=');
              if (eq <= 0) continue;
              const k = kv.slice(0, eq).trim();
              const v = kv.slice(eq + 1);
              e.set(xp + k, v);
              if (parsetime && k === 'devTime') {
                const ms = readTimestamp(v, tz);
                if (ms !== undefined) e.set('@timestamp', String(ms));
              }
            }
          }
        }
        emit(e);
      },
    };
  },
};

function parseInt16(d: string): number {
  return Number.parseInt(d.replace(/^0?x/i, ''), 16);
}

// --- findTimestamp --------------------------------------------------------------------------------

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

interface Found {
  ms: number;
  zoneText: string | null;
}

/** Formats findTimestamp knows, tried at each position of the first 128 characters. */
const FORMATS: { re: RegExp; read(m: RegExpExecArray, zone: Zone | null, now: number): Found | undefined }[] = [
  {
    // 2024-03-05T10:20:30.123Z, 2024-03-05 10:20:30,123 +02:00
    re: /(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?/y,
    read(m, zone) {
      const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, Math.min(59, +m[6]!), Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)));
      return withZone(ms, m[8] ?? null, zone);
    },
  },
  {
    // 05/Mar/2024:10:20:30 +0000 (access logs)
    re: /(\d{2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\s*([+-]\d{4}))?/y,
    read(m, zone) {
      const mon = MONTHS[m[2]!.toLowerCase()];
      if (mon === undefined) return undefined;
      return withZone(Date.UTC(+m[3]!, mon, +m[1]!, +m[4]!, +m[5]!, Math.min(59, +m[6]!)), m[7] ?? null, zone);
    },
  },
  {
    // Mar  5 10:20:30 (syslog): the year is chosen so the date is at most 7 days ahead
    re: /([A-Za-z]{3})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?/y,
    read(m, zone, now) {
      if (zone === null) return undefined;
      const mon = MONTHS[m[1]!.toLowerCase()];
      if (mon === undefined) return undefined;
      let year = new Date(now).getUTCFullYear();
      const at = (y: number): number => Date.UTC(y, mon, +m[2]!, +m[3]!, +m[4]!, Math.min(59, +m[5]!), Number((m[6] ?? '0').padEnd(3, '0').slice(0, 3)));
      if (at(year) - now > 7 * 86_400_000) year--;
      return withZone(at(year), null, zone);
    },
  },
];

function withZone(wall: number, zoneText: string | null, def: Zone | null): Found | undefined {
  if (zoneText !== null) {
    const z = parseZone(zoneText);
    if (z === null) return undefined;
    return { ms: wallToUtc(wall, z), zoneText };
  }
  if (def === null) return undefined;
  return { ms: wallToUtc(wall, def), zoneText: null };
}

function readTimestamp(text: string, zone: Zone): number | undefined {
  const n = parseNumber(text);
  if (n !== undefined) return n > 100_000_000_000 ? n : n * 1000;
  return findIn(text, zone, Date.now())?.ms;
}

function findIn(text: string, zone: Zone | null, now: number): Found | undefined {
  const head = text.slice(0, 128);
  for (let i = 0; i < head.length; i++) {
    if (i > 0 && /[0-9A-Za-z]/.test(head[i - 1]!)) continue;
    for (const f of FORMATS) {
      f.re.lastIndex = i;
      const m = f.re.exec(head);
      if (m !== null) {
        const r = f.read(m, zone, now);
        if (r !== undefined) return r;
      }
    }
  }
  return undefined;
}

const findTimestamp: FnDef = {
  name: 'findTimestamp',
  params: [
    { name: 'field', type: 'field', default: '@rawstring' },
    { name: 'as', type: 'string', default: '@timestamp' },
    { name: 'timezone', type: 'string' },
    { name: 'timezoneAs', type: 'string', default: '@timezone' },
    { name: 'timezoneField', type: 'field', default: '@timezone' },
    { name: 'addErrors', type: 'bool', default: 'true' },
  ],
  stage(a, env) {
    const field = a.string('field', '@rawstring');
    const as = a.string('as', '@timestamp');
    const tzText = a.string('timezone');
    const zoneOf = eventZone(a);
    const tzAs = a.string('timezoneAs', '@timezone');
    const addErrors = a.bool('addErrors', true);
    const clock = env.ctx.clock;
    const fixedNow = env.ctx.now;
    return {
      run(e, emit) {
        const s = e.get(field);
        const zone = zoneOf(e);
        const found = s === undefined ? undefined : findIn(s, zone, clock === undefined ? fixedNow : clock());
        if (found !== undefined) {
          e.set(as, String(found.ms));
          if (found.zoneText !== null) e.set(tzAs, found.zoneText);
        } else if (addErrors) {
          e.set('@error', 'true');
          e.set('@error_msg', s === undefined ? `findTimestamp: no field ${field}` : tzText === undefined && zone === null ? 'findTimestamp: no timestamp with a time zone found (give timezone= for timestamps without one)' : 'findTimestamp: no timestamp found');
        }
        emit(e);
      },
    };
  },
};

export const moreParsingFunctions: FnDef[] = [parseInt, parseCsv, parseFixedWidth, parseUri, parseUrl, parseXml, parseCEF, parseLEEF, findTimestamp];
