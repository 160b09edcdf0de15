/**
 * Where actions may connect. Loopback, private, link-local and other internal ranges are refused
 * unless `alerts.allow_targets` lists them, so an alert cannot be used to reach services behind
 * the node (metadata endpoints, admin ports). The check is made on the address actually connected
 * to: host names are resolved here and the connection goes to the checked address, so a DNS answer
 * cannot change between the check and the connect.
 *
 * Names are resolved with c-ares (dns.Resolver) under a timeout, not dns.lookup: getaddrinfo runs on
 * the libuv thread pool, where a hung lookup keeps a thread the file system needs long after the
 * action gave up. c-ares does not read /etc/hosts; `localhost` names are loopback (RFC 6761).
 */
import { Resolver } from 'node:dns/promises';
import { isIP, type BlockList } from 'node:net';
import { blockListOf, parseCidr, type Cidr } from '../lib/cidr.js';
import { permanent, transient } from './errors.js';

/** Ranges no action may reach unless allowed: RFC 6890 special-purpose blocks that are not the public internet. */
const INTERNAL: readonly string[] = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (cloud metadata lives here)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
  '::/128', // unspecified
  '::1/128', // loopback
  '::/96', // IPv4-compatible (deprecated): an IPv4 address in disguise
  '64:ff9b::/96', // NAT64: the same, through a translator
  '64:ff9b:1::/48', // local-use NAT64
  '2001::/32', // Teredo: the IPv4 server and client are embedded (obfuscated), refused as a whole
  '2002::/16', // 6to4: an IPv4 address is embedded, refused as a whole
  'fc00::/7', // unique local
  'fec0::/10', // site-local (deprecated, still routed internally in places)
  'fe80::/10', // link-local
  'ff00::/8', // multicast
];

function cidrs(list: readonly string[]): Cidr[] {
  return list.map((text) => {
    const c = parseCidr(text);
    if ('error' in c) throw new Error(`target policy: ${c.error}`);
    return c;
  });
}

const internal = blockListOf(cidrs(INTERNAL));
/**
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) would smuggle any IPv4 address past the IPv4 rules, so it is
 * refused as a whole. It is a list of its own because a BlockList also matches plain IPv4
 * addresses against ::ffff: rules, which would refuse every IPv4 address.
 */
const mapped = blockListOf(cidrs(['::ffff:0:0/96']));

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** Longest one DNS query waits for an answer (c-ares, per try). */
const DNS_TIMEOUT_MS = 2000;
const DNS_TRIES = 2;

export class TargetPolicy {
  private readonly allowed: BlockList;
  private readonly resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });

  /** `allow`: CIDR blocks (already validated by the config loader). */
  constructor(allow: readonly string[]) {
    this.allowed = blockListOf(cidrs(allow));
  }

  /** The addresses of a host name: IPv4 first, then IPv6. */
  private async lookup(name: string): Promise<string[]> {
    const lower = name.toLowerCase().replace(/\.$/, '');
    if (lower === 'localhost' || lower.endsWith('.localhost')) return ['127.0.0.1', '::1'];
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(name), this.resolver.resolve6(name)]);
    const out = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (out.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`no address for ${name}`);
    return out;
  }

  permits(address: string): boolean {
    const f = family(address);
    if (this.allowed.check(address, f)) return true;
    return !internal.check(address, f) && !(f === 'ipv6' && mapped.check(address, 'ipv6'));
  }

  /**
   * The address to connect to for `host` (a name or an IP literal, brackets allowed): the first
   * resolved address the policy permits. Refuses when there is none.
   */
  async resolve(host: string): Promise<string> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    let addresses: string[];
    if (isIP(bare) !== 0) addresses = [bare];
    else {
      try {
        addresses = await this.lookup(bare);
      } catch (err) {
        throw transient(`cannot resolve host "${bare}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    const ok = addresses.find((a) => this.permits(a));
    if (ok === undefined) {
      throw permanent(
        'E_TARGET_REFUSED',
        `refused to connect to "${bare}" (${addresses.join(', ')}): loopback, private and link-local addresses are not allowed unless listed in alerts.allow_targets`,
      );
    }
    return ok;
  }
}
