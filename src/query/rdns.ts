/**
 * Reverse DNS for reverseDns() and rdns() (query-functions.md §1): the PTR names of the distinct
 * addresses in a query's result rows, looked up on the coordinator after the first aggregate.
 *
 * Bounded as the product bounds it: at most `limit` distinct addresses per call (the rest are not
 * annotated, with a warning), one time budget per call (query.rdns_timeout_ms: lookups not answered
 * by then leave their rows unannotated), a node-wide limit of concurrent requests
 * (query.rdns_concurrency) and of requests per second (query.rdns_requests_per_second), and a cache
 * of answers (a late answer is kept, so a later run finds it). Addresses in the internal ranges the
 * alerts' outbound guard refuses (src/alerts/target-policy.ts) are not looked up unless
 * alerts.allow_targets lists them, and a `server=` must pass the same guard. The name servers are
 * query.rdns_server's, or the system's when it is empty. Names are asked with c-ares
 * (dns.Resolver), which never blocks a libuv thread.
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { TargetPolicy } from '../alerts/target-policy.js';

/** The node's settings (config query.rdns_*, alerts.allow_targets); travels in the query context. */
export interface RdnsSettings {
  enabled: boolean;
  /** `ip` or `ip:port` of the name server; empty: the system's. */
  server: string;
  timeoutMs: number;
  concurrency: number;
  perSecond: number;
  maxLimit: number;
  allowTargets: string[];
}

/** The product's ReverseDnsDefaultLimit. */
export const RDNS_DEFAULT_LIMIT = 5000;
const CACHE_MAX = 50_000;
const CACHE_TTL_MS = 10 * 60_000;

/** `ip`, `ip:port` or `[ipv6]:port`: the address part, or null when it is not one. */
export function serverAddress(server: string): string | null {
  if (isIP(server) !== 0) return server;
  const m = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(server) ?? /^([0-9.]+):(\d{1,5})$/.exec(server);
  if (m === null || isIP(m[1]!) === 0 || Number(m[2]) < 1 || Number(m[2]) > 65535) return null;
  return m[1]!;
}

const policies = new Map<string, TargetPolicy>();

/** The alerts' outbound guard for these allowed blocks. */
export function guardFor(allow: readonly string[]): TargetPolicy {
  const key = allow.join(',');
  let p = policies.get(key);
  if (p === undefined) {
    if (policies.size > 16) policies.clear();
    p = new TargetPolicy(allow);
    policies.set(key, p);
  }
  return p;
}

export interface ReverseOutcome {
  names: Map<string, string>;
  warnings: string[];
}

/** One node's reverse resolver: its cache, concurrency and rate, shared by every query. */
class ReverseResolver {
  private readonly cache = new Map<string, { name: string | null; until: number }>();
  private readonly resolvers = new Map<string, Resolver>();
  private active = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private tokens = 0;
  private refilled = 0;

  private resolverFor(server: string, timeoutMs: number): Resolver {
    const key = `${server}|${timeoutMs}`;
    let r = this.resolvers.get(key);
    if (r === undefined) {
      if (this.resolvers.size > 16) this.resolvers.clear();
      r = new Resolver({ timeout: timeoutMs, tries: 1 });
      if (server !== '') r.setServers([server]);
      this.resolvers.set(key, r);
    }
    return r;
  }

  private remember(key: string, name: string | null): void {
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { name, until: Date.now() + CACHE_TTL_MS });
  }

  /** A request slot (node-wide), or false when the deadline passed first. */
  private async slot(s: RdnsSettings, deadline: number): Promise<boolean> {
    while (this.active >= s.concurrency) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.slotWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.active++;
    return true;
  }

  private release(): void {
    this.active--;
    this.slotWaiters.shift()?.();
  }

  /** A token of the node-wide rate (requests per second), or false when the deadline passed first. */
  private async token(s: RdnsSettings, deadline: number): Promise<boolean> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(s.perSecond, this.tokens + ((now - this.refilled) * s.perSecond) / 1000);
      this.refilled = now;
      if (this.tokens >= 1) {
        this.tokens--;
        return true;
      }
      const wait = Math.ceil(((1 - this.tokens) * 1000) / s.perSecond);
      if (now + wait > deadline) return false;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  async reverse(ips: readonly string[], server: string, s: RdnsSettings): Promise<{ names: Map<string, string>; failed: number; late: number }> {
    const deadline = Date.now() + s.timeoutMs;
    const names = new Map<string, string>();
    let failed = 0;
    let late = 0;
    const resolver = this.resolverFor(server, s.timeoutMs);
    let next = 0;
    const one = async (ip: string): Promise<void> => {
      const key = `${server}|${ip}`;
      const hit = this.cache.get(key);
      if (hit !== undefined && hit.until > Date.now()) {
        if (hit.name !== null) names.set(ip, hit.name);
        return;
      }
      if (!(await this.slot(s, deadline))) {
        late++;
        return;
      }
      let settled = false;
      try {
        if (!(await this.token(s, deadline))) {
          late++;
          return;
        }
        // The request keeps its slot until c-ares settles it (at most timeoutMs), even when this
        // call stops waiting first; its answer is cached for later runs.
        const asked = resolver.reverse(ip).then(
          (hosts) => {
            const name = hosts[0] ?? null;
            this.remember(key, name);
            return name;
          },
          (err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOTFOUND' || err.code === 'ENODATA') this.remember(key, null);
            throw err;
          },
        );
        settled = true;
        void asked.then(
          () => this.release(),
          () => this.release(),
        );
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'late'>((r) => {
          timer = setTimeout(() => r('late'), Math.max(0, deadline - Date.now()));
        });
        try {
          const got = await Promise.race([asked, timeout]);
          if (got === 'late') late++;
          else if (got !== null) names.set(ip, got);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOTFOUND' && (err as NodeJS.ErrnoException).code !== 'ENODATA') failed++;
        } finally {
          clearTimeout(timer);
        }
      } finally {
        if (!settled) this.release();
      }
    };
    const worker = async (): Promise<void> => {
      while (next < ips.length) await one(ips[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(s.concurrency, ips.length) }, worker));
    return { names, failed, late };
  }
}

let shared: ReverseResolver | null = null;

/**
 * The host names of the distinct addresses in `values` (in order of first appearance): at most
 * `limit` of them are asked; the warnings say what was left out and why. `fn` names the function.
 */
export async function reverseNames(fn: string, values: Iterable<string>, limit: number, server: string, s: RdnsSettings): Promise<ReverseOutcome> {
  const guard = guardFor(s.allowTargets);
  const distinct: string[] = [];
  const seen = new Set<string>();
  let over = 0;
  let internal = 0;
  for (const v of values) {
    if (seen.has(v)) continue;
    seen.add(v);
    if (isIP(v) === 0) continue;
    if (!guard.permits(v)) {
      internal++;
      continue;
    }
    if (distinct.length >= limit) over++;
    else distinct.push(v);
  }
  const warnings: string[] = [];
  if (over > 0) warnings.push(`${fn}: ${over} more distinct addresses than the limit of ${limit} were not looked up`);
  if (internal > 0) warnings.push(`${fn}: ${internal} addresses in loopback, private or other internal ranges were not looked up (alerts.allow_targets lists the ranges allowed)`);
  if (distinct.length === 0) return { names: new Map(), warnings };
  shared ??= new ReverseResolver();
  const r = await shared.reverse(distinct, server, s);
  if (r.late > 0) warnings.push(`${fn}: ${r.late} lookups were not answered within ${s.timeoutMs} ms (query.rdns_timeout_ms); their rows are not annotated`);
  if (r.failed > 0) warnings.push(`${fn}: ${r.failed} lookups failed at the name server; their rows are not annotated`);
  return { names: r.names, warnings };
}
