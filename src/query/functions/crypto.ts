/**
 * Hashing and encoding (query-functions.md §1): crypto:md5/sha1/sha256, hash, tokenHash,
 * hashRewrite, hashMatch, base64Encode/base64Decode, parseHexString, shannonEntropy, communityId.
 * node:crypto is used for the digests. A missing field counts as "" where the product says so
 * (crypto:*), and gives no output elsewhere.
 */
import { createHash } from 'node:crypto';
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { argValue, fieldName, oneOf, out, valueDef } from './define.js';
import { parseIp } from './logic.js';
import type { FnDef, ValueFn } from './types.js';

/** The values of a `field*: str[]` argument joined (missing counts as ""). */
function joined(a: BoundArgs): (e: Ev) => string {
  const raw = a.raw('field')!;
  if (raw.k === 'array') {
    const names = a.list('field')!;
    return (e) => names.map((n) => e.get(n) ?? '').join('');
  }
  const v = argValue(a, 'field');
  return (e) => v(e) ?? '';
}

function digest(name: string, algo: string): FnDef {
  const short = name.slice('crypto:'.length);
  return valueDef(name, [{ name: 'field', type: 'fields', unnamed: true, required: true }], `_${short}`, (a) => {
    const v = joined(a);
    return (e) => createHash(algo).update(v(e), 'utf8').digest('hex');
  });
}

/** MurmurHash3 x86 32-bit over UTF-8 bytes (a stable, well-spread non-cryptographic hash). */
export function murmur3(text: string, seed: number): number {
  const data = Buffer.from(text, 'utf8');
  let h = seed >>> 0;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const n = data.length & ~3;
  for (let i = 0; i < n; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const rem = data.length & 3;
  if (rem > 0) {
    let k = 0;
    if (rem === 3) k ^= data[n + 2]! << 16;
    if (rem >= 2) k ^= data[n + 1]! << 8;
    k ^= data[n]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= data.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const hash = valueDef(
  'hash',
  [
    { name: 'field', type: 'fields', unnamed: true, required: true },
    { name: 'limit', type: 'number' },
    { name: 'seed', type: 'string' },
  ],
  '_hash',
  (a) => {
    const v = joined(a);
    const limit = a.number('limit');
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) a.fail('limit', 'hash: limit must be a whole number, 1 or more');
    const seedText = a.string('seed');
    const seed = seedText === undefined ? 0 : murmur3(seedText, 0);
    return (e) => {
      const h = murmur3(v(e), seed);
      return String(limit === undefined ? h : h % limit);
    };
  },
);

/** tokenHash: order-independent; the sum (mod 2^32) of the hashes of the space-separated tokens. */
const tokenHash = valueDef('tokenHash', [{ name: 'field', type: 'field', unnamed: true, required: true }], '_tokenHash', (a) => {
  const v = argValue(a, 'field');
  return (e) => {
    const s = v(e);
    if (s === undefined) return undefined;
    let sum = 0;
    for (const tok of s.split(/\s+/)) if (tok !== '') sum = (sum + murmur3(tok, 0)) >>> 0;
    return String(sum);
  };
});

function saltedHash(a: BoundArgs): (input: string) => string {
  const algo = oneOf(a, 'hash', ['sha256', 'sha512'] as const, 'sha256');
  const bits = a.number('bits', 256);
  const max = algo === 'sha256' ? 256 : 512;
  if (!Number.isInteger(bits) || bits < 8 || bits > Math.min(256, max) || bits % 8 !== 0) a.fail('bits', `${a.def.name}: bits must be a multiple of 8 from 8 to 256`);
  const salt = a.string('salt')!;
  return (input) => createHash(algo).update(salt, 'utf8').update(input, 'utf8').digest('hex').slice(0, bits / 4);
}

const hashRewrite: FnDef = {
  name: 'hashRewrite',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'salt', type: 'string', required: true },
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'bits', type: 'number', default: '256' },
    { name: 'hash', type: 'string', default: 'sha256' },
    { name: 'replaceInRawstring', type: 'bool', default: 'true' },
  ],
  stage(a) {
    const field = fieldName(a) ?? a.fail('field', 'hashRewrite: field must be a field name');
    const as = a.string('as', field);
    const h = saltedHash(a);
    const inRaw = a.bool('replaceInRawstring', true);
    return {
      run(e, emit) {
        const v = e.get(field);
        if (v !== undefined) {
          const d = h(v);
          e.set(as, d);
          if (inRaw && v !== '') {
            const raw = e.get('@rawstring');
            if (raw !== undefined && raw.includes(v)) e.set('@rawstring', raw.split(v).join(d));
          }
        }
        emit(e);
      },
    };
  },
};

const hashMatch: FnDef = {
  name: 'hashMatch',
  params: [
    { name: 'input', type: 'string', unnamed: true, required: true },
    { name: 'salt', type: 'string', required: true },
    { name: 'field', type: 'field' },
    { name: 'bits', type: 'number', default: '256' },
    { name: 'hash', type: 'string', default: 'sha256' },
  ],
  filter(a) {
    const d = saltedHash(a)(a.string('input')!);
    const field = a.string('field');
    if (field === undefined) return (e) => e.get('@rawstring')?.includes(d) === true;
    return (e) => e.get(field) === d;
  },
};

const CHARSETS = ['UTF-8', 'ISO-8859-1', 'UTF-16BE', 'UTF-16LE'] as const;

function decodeBytes(b: Buffer, charset: (typeof CHARSETS)[number]): string | undefined {
  switch (charset) {
    case 'ISO-8859-1':
      return b.toString('latin1');
    case 'UTF-16LE':
      return b.length % 2 === 0 ? b.toString('utf16le') : undefined;
    case 'UTF-16BE': {
      if (b.length % 2 !== 0) return undefined;
      const c = Buffer.from(b);
      c.swap16();
      return c.toString('utf16le');
    }
    default: {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(b);
      } catch {
        return undefined;
      }
    }
  }
}

const base64Encode = valueDef('base64Encode', [{ name: 'field', type: 'field', unnamed: true, required: true }], '_base64Encode', (a) => {
  const v = argValue(a, 'field');
  return (e) => {
    const s = v(e);
    return s === undefined ? undefined : Buffer.from(s, 'utf8').toString('base64');
  };
});

/** A decoder of text into bytes (null: not decodable), then the bytes as `charset` text. */
function bytesDecoder(name: string, defAs: string, toBytes: (s: string) => Buffer | null): FnDef {
  return valueDef(
    name,
    [
      { name: 'field', type: 'field', unnamed: true, required: true },
      { name: 'charset', type: 'string', default: 'UTF-8' },
    ],
    defAs,
    (a) => {
      const v = argValue(a, 'field');
      const cs = oneOf(a, 'charset', CHARSETS, 'UTF-8');
      return (e) => {
        const s = v(e);
        const b = s === undefined ? null : toBytes(s);
        return b === null ? undefined : decodeBytes(b, cs);
      };
    },
  );
}

// Characters outside the alphabet are ignored; a length that cannot be Base64 is no output.
const base64Decode = bytesDecoder('base64Decode', '_base64Decode', (s) => {
  const clean = s.replace(/[^A-Za-z0-9+/]/g, '');
  return clean.length % 4 === 1 ? null : Buffer.from(clean, 'base64');
});

// 0x / 16# prefixes are removed, other non-hex characters ignored.
const parseHexString = bytesDecoder('parseHexString', '_parsehexstring', (s) => {
  let hex = s.trim();
  if (/^0x/i.test(hex)) hex = hex.slice(2);
  else if (hex.startsWith('16#')) hex = hex.slice(3);
  hex = hex.replace(/[^0-9a-fA-F]/g, '');
  return hex.length % 2 !== 0 ? null : Buffer.from(hex, 'hex');
});

const shannonEntropy = valueDef('shannonEntropy', [{ name: 'field', type: 'field', unnamed: true, required: true }], '_shannonentropy', (a) => {
  const v = argValue(a, 'field');
  return (e) => {
    const s = v(e);
    if (s === undefined) return undefined;
    const chars = [...s];
    if (chars.length === 0) return '0';
    const counts = new Map<string, number>();
    for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
    let h = 0;
    for (const n of counts.values()) {
      const p = n / chars.length;
      h -= p * Math.log2(p);
    }
    return out(h);
  };
});

const PROTOCOLS: Record<string, number> = { icmp: 1, tcp: 6, udp: 17, icmp6: 58, ipv6icmp: 58, 'ipv6-icmp': 58, sctp: 132, gre: 47 };
/** ICMP type -> its reply type, for the Community ID's two-way mapping (v4 and v6). */
const ICMP4_PAIRS: Record<number, number> = { 8: 0, 0: 8, 13: 14, 14: 13, 15: 16, 16: 15, 17: 18, 18: 17, 10: 9, 9: 10 };
const ICMP6_PAIRS: Record<number, number> = { 128: 129, 129: 128, 133: 134, 134: 133, 135: 136, 136: 135, 130: 131, 131: 130 };

function ipBytes(text: string): Buffer | null {
  const ip = parseIp(text);
  if (ip === null) return null;
  const n = ip.bits / 8;
  const b = Buffer.alloc(n);
  let v = ip.v;
  for (let i = n - 1; i >= 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return b;
}

/** Community ID v1 (the Corelight/Zeek flow hash): "1:" + Base64(SHA-1(seed, ordered tuple)). */
const communityId: FnDef = valueDef(
  'communityId',
  [
    { name: 'sourceip', type: 'field', required: true },
    { name: 'destinationip', type: 'field', required: true },
    { name: 'proto', type: 'field', required: true },
    { name: 'sourceport', type: 'field' },
    { name: 'destinationport', type: 'field' },
    { name: 'icmptype', type: 'field' },
    { name: 'icmpcode', type: 'field' },
    { name: 'seed', type: 'number', default: '0' },
  ],
  '_community_id',
  (a) => {
    const seed = a.number('seed', 0);
    if (!Number.isInteger(seed) || seed < 0 || seed > 65535) a.fail('seed', 'communityId: seed must be a whole number from 0 to 65535');
    const get = (n: string): ValueFn => (a.has(n) ? argValue(a, n) : () => undefined);
    const [sip, dip, sp, dp, it, ic] = ['sourceip', 'destinationip', 'sourceport', 'destinationport', 'icmptype', 'icmpcode'].map(get);
    // proto names a field, or is the protocol itself (tcp, udp, 6) when no such field exists.
    const protoName = a.string('proto')!;
    const proto = (e: Ev): string | undefined => e.get(protoName) ?? protoName;
    const port = (v: string | undefined): number | undefined => {
      const n = parseNumber(v);
      return n !== undefined && Number.isInteger(n) && n >= 0 && n <= 65535 ? n : undefined;
    };
    return (e) => {
      let src = ipBytes(sip!(e) ?? '');
      let dst = ipBytes(dip!(e) ?? '');
      const pt = proto!(e);
      if (src === null || dst === null || pt === undefined || src.length !== dst.length) return undefined;
      const p = PROTOCOLS[pt.toLowerCase()] ?? parseNumber(pt);
      if (p === undefined || !Number.isInteger(p) || p < 0 || p > 255) return undefined;
      let s: number | undefined;
      let d: number | undefined;
      let oneWay = false;
      if (p === 1 || p === 58) {
        s = port(it!(e));
        d = port(ic!(e));
        if (s === undefined || d === undefined) return undefined;
        const pairs = p === 1 ? ICMP4_PAIRS : ICMP6_PAIRS;
        if (Object.hasOwn(pairs, s)) d = pairs[s]!;
        else oneWay = true;
      } else {
        s = port(sp!(e));
        d = port(dp!(e));
      }
      const hasPorts = s !== undefined && d !== undefined;
      // Order the endpoints so both directions of a flow hash alike.
      const c = Buffer.compare(src, dst);
      if (!oneWay && (c > 0 || (c === 0 && hasPorts && s! > d!))) {
        [src, dst] = [dst, src];
        [s, d] = [d, s];
      }
      const head = Buffer.alloc(2);
      head.writeUInt16BE(seed);
      const parts = [head, src, dst, Buffer.from([p, 0])];
      if (hasPorts) {
        const ports = Buffer.alloc(4);
        ports.writeUInt16BE(s!, 0);
        ports.writeUInt16BE(d!, 2);
        parts.push(ports);
      }
      return `1:${createHash('sha1').update(Buffer.concat(parts)).digest('base64')}`;
    };
  },
);

export const cryptoFunctions: FnDef[] = [
  digest('crypto:md5', 'md5'),
  digest('crypto:sha1', 'sha1'),
  digest('crypto:sha256', 'sha256'),
  hash,
  tokenHash,
  hashRewrite,
  hashMatch,
  base64Encode,
  base64Decode,
  parseHexString,
  shannonEntropy,
  communityId,
];
