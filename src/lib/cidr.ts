/**
 * CIDR blocks ("10.0.0.0/8", "::1/128", a bare address meaning one host) parsed once and turned
 * into a `net.BlockList`, the address matcher Node ships. Used by the config validator and by the
 * outbound address policy of alert actions.
 */
import { BlockList, isIP } from 'node:net';

export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** The block `text` describes, or a message saying why it is not one. */
export function parseCidr(text: string): Cidr | { error: string } {
  const slash = text.indexOf('/');
  const address = (slash < 0 ? text : text.slice(0, slash)).trim();
  const version = isIP(address);
  if (version === 0) return { error: `"${text.slice(0, 100)}" is not an IP address or CIDR block` };
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (slash < 0) return { address, prefix: max, family };
  const p = text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(p) || Number(p) > max) return { error: `"${text.slice(0, 100)}": the prefix length must be 0 to ${max}` };
  return { address, prefix: Number(p), family };
}

export function blockListOf(blocks: readonly Cidr[]): BlockList {
  const list = new BlockList();
  for (const b of blocks) list.addSubnet(b.address, b.prefix, b.family);
  return list;
}
