/**
 * Filter and expression functions: in(), test(), cidr(), eval(), if(), coalesce(), now(). in, test
 * and cidr are filters (usable with `!` and inside and/or); if, coalesce and now give values inside
 * expressions; eval assigns expressions like `:=`.
 */
import type { Expr } from '../ast.js';
import type { Ev } from '../runtime.js';
import { compileWildcard, hasWildcard } from '../wildcard.js';
import { fold } from '../casefold.js';
import { cidrFinder } from '../../files/lookup-index.js';
import type { BoundArgs } from './args.js';
import { lookupColumn } from './lookups.js';
import type { FnDef, ValueFn } from './types.js';

// --- in ------------------------------------------------------------------------------------------

function inPredicate(a: BoundArgs): (e: Ev) => boolean {
  const field = a.string('field')!;
  const values = a.list('values')!;
  const ignoreCase = a.bool('ignoreCase', false);
  const exact = new Set<string>();
  const globs: ((s: string) => boolean)[] = [];
  for (const v of values) {
    if (hasWildcard(v)) globs.push(compileWildcard(v, { anchored: true, ignoreCase }));
    else exact.add(ignoreCase ? fold(v) : v);
  }
  return (e) => {
    const v = e.get(field);
    if (v === undefined) return false;
    if (exact.has(ignoreCase ? fold(v) : v)) return true;
    for (const g of globs) if (g(v)) return true;
    return false;
  };
}

const inFn: FnDef = {
  name: 'in',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'values', type: 'strings', required: true },
    { name: 'ignoreCase', type: 'bool', default: 'false' },
  ],
  filter: inPredicate,
};

// --- test ----------------------------------------------------------------------------------------

const test: FnDef = {
  name: 'test',
  params: [{ name: 'expression', type: 'expr', unnamed: true, required: true }],
  filter: (a, env) => env.cond(a.raw('expression')!),
};

// --- cidr ----------------------------------------------------------------------------------------

/** An IPv4 or IPv6 address as a bigint plus its bit width; null when not an address. */
export function parseIp(text: string): { v: bigint; bits: 32 | 128 } | null {
  const t = text.trim();
  if (t.includes('.') && !t.includes(':')) {
    const parts = t.split('.');
    if (parts.length !== 4) return null;
    let v = 0n;
    for (const p of parts) {
      if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
      v = (v << 8n) | BigInt(Number(p));
    }
    return { v, bits: 32 };
  }
  if (!t.includes(':')) return null;
  let s = t;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4 !== null) {
    const tail = parseIp(v4[2]!);
    if (tail === null) return null;
    s = `${v4[1]}${(tail.v >> 16n).toString(16)}:${(tail.v & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tailGroups = halves.length === 2 ? (halves[1] === '' ? [] : halves[1]!.split(':')) : [];
  const missing = 8 - head.length - tailGroups.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) return null;
  const groups = [...head, ...new Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tailGroups];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  return { v, bits: 128 };
}

/** A plain dotted-quad IPv4 address as a number; -1 for anything else (parseIp decides those). */
export function ipv4Number(text: string): number {
  let v = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits > 3) return -1;
      part = part * 10 + (c - 48);
    } else if (c === 46) {
      if (digits === 0 || part > 255 || ++dots > 3) return -1;
      v = v * 256 + part;
      part = 0;
      digits = 0;
    } else return -1;
  }
  if (dots !== 3 || digits === 0 || part > 255) return -1;
  return v * 256 + part;
}

/**
 * cidr(field, subnet=[...]) or cidr(field, file=, column=): keeps events whose address is in one of
 * the subnets listed, or in one of those a lookup file's column holds (rows without a subnet are
 * left out). Both may be given. `!cidr(...)` negates; `negate=true` is the deprecated spelling.
 */
const cidr: FnDef = {
  name: 'cidr',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'subnet', type: 'strings' },
    { name: 'file', type: 'string' },
    { name: 'column', type: 'string' },
    { name: 'negate', type: 'bool', default: 'false' },
  ],
  filter(a, env) {
    const field = a.string('field')!;
    const negate = a.bool('negate', false);
    const listed = a.list('subnet');
    const file = a.has('file') ? lookupColumn(a, env, 'column') : null;
    if (listed === undefined && file === null) return a.fail('subnet', 'cidr: give the subnets, subnet=[...], or a lookup file and its column, file= and column=');
    const nets = (listed ?? []).map((s) => {
      const [addr, len] = s.split('/');
      const ip = parseIp(addr ?? '');
      const bits = len === undefined ? ip?.bits : Number(len);
      if (ip === null || bits === undefined || !Number.isInteger(bits) || bits < 0 || bits > ip.bits) return a.fail('subnet', `cidr: ${s} is not a subnet such as 10.0.0.0/8 or 2001:db8::/32`);
      const shift = BigInt(ip.bits - bits);
      return { width: ip.bits, shift, base: ip.v >> shift };
    });
    // IPv4 subnets again as numbers: a plain dotted quad is tested without BigInt (its network is
    // floor(address / 2^(32 - bits))); other text goes through parseIp.
    const v4 = nets.filter((n) => n.width === 32).map((n) => ({ div: 2 ** Number(n.shift), base: Number(n.base) }));
    const inList = (v: string): boolean => {
      const n = ipv4Number(v);
      if (n >= 0) {
        for (const net of v4) if (Math.floor(n / net.div) === net.base) return true;
        return false;
      }
      const ip = parseIp(v);
      return ip !== null && nets.some((net) => net.width === ip.bits && ip.v >> net.shift === net.base);
    };
    // The file's subnets through the lookup index (built once per table and column on each thread).
    const inFile = file === null ? () => false : (v: string): boolean => cidrFinder(file.table, file.column)([v], 1).length > 0;
    return (e) => {
      const v = e.get(field);
      if (v === undefined) return negate;
      return (inList(v) || inFile(v)) !== negate;
    };
  },
};

// --- eval / if / coalesce / now ------------------------------------------------------------------

const evalFn: FnDef = {
  name: 'eval',
  params: [],
  freeArgs: true,
  stage(a, env) {
    const assigns: [string, ValueFn][] = a.call.args.map((arg) => {
      if (arg.name === null) {
        // eval(x = a + 1) may reach us as an unnamed comparison `x == ...` depending on the parser.
        const v = arg.value;
        if (v.k === 'binary' && v.op === '==' && v.left.k === 'ident') return [v.left.name, env.expr(v.right)];
        return env.fail(arg.span, 'eval takes assignments such as eval(x = a + 1)');
      }
      return [arg.name, env.expr(arg.value)];
    });
    return {
      run(e, emit) {
        // Left to right; an assignment with no value assigns nothing and the event goes on
        // (query-functions.md §2.5).
        for (const [name, v] of assigns) {
          const r = v(e);
          if (r !== undefined) e.set(name, r);
        }
        emit(e);
      },
    };
  },
};

const ifFn: FnDef = {
  name: 'if',
  params: [
    { name: 'condition', type: 'expr', unnamed: true, required: true },
    { name: 'then', type: 'expr', required: true },
    { name: 'else', type: 'expr', required: true },
    { name: 'as', type: 'string', default: '_if' },
  ],
  value(a, env) {
    const c = env.cond(a.raw('condition')!);
    const t = env.expr(a.raw('then')!);
    const f = env.expr(a.raw('else')!);
    return (e) => (c(e) ? t(e) : f(e));
  },
};

const coalesce: FnDef = {
  name: 'coalesce',
  params: [
    { name: 'expressions', type: 'expr', unnamed: true, required: true },
    { name: 'ignoreEmpty', type: 'bool', default: 'true' },
    { name: 'as', type: 'string', default: '_coalesce' },
  ],
  value(a, env) {
    const raw = a.raw('expressions')!;
    const items: Expr[] = raw.k === 'array' ? raw.items : [raw];
    const fns = items.map((it) => (it.k === 'ident' ? (e: Ev) => e.get(it.name) : env.expr(it)));
    const ignoreEmpty = a.bool('ignoreEmpty', true);
    return (e) => {
      for (const f of fns) {
        const v = f(e);
        if (v !== undefined && !(ignoreEmpty && v === '')) return v;
      }
      return undefined;
    };
  },
};

const now: FnDef = {
  name: 'now',
  params: [{ name: 'as', type: 'string', unnamed: true, default: '_now' }],
  value(_a, env) {
    const clock = env.ctx.clock;
    if (clock !== undefined) return () => String(clock());
    const t = String(env.ctx.now);
    return () => t;
  },
};

export const logicFunctions: FnDef[] = [inFn, test, cidr, evalFn, ifFn, coalesce, now];
