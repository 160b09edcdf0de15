/**
 * Digest-partition layouts: partition i -> node ids in priority order. A layout replaces the whole
 * previous one and must obey the product's rules; `validateLayout` reports every broken rule at once.
 * Wire form (REST): `[{"partition": 0, "hosts": [1, 2]}, ...]`.
 */
import { LogsvcError } from '../lib/errors.js';

export const MAX_PARTITIONS = 1024;
const MAX_HOSTS_PER_PARTITION = 64;

export interface PartitionEntry {
  partition: number;
  hosts: number[];
}

export function defaultLayout(count: number, nodeId: number): number[][] {
  return Array.from({ length: count }, () => [nodeId]);
}

/**
 * A cluster's layout over `nodeIds` (sorted): partition i lists every node, starting at the i-th
 * (mod n) and going round, so ownership spreads evenly and each partition fails over in its own
 * order.
 */
export function rotatedLayout(count: number, nodeIds: readonly number[]): number[][] {
  const ids = [...nodeIds].sort((a, b) => a - b);
  return Array.from({ length: count }, (_, i) => ids.map((_, j) => ids[(i + j) % ids.length]!));
}

export function toWire(layout: readonly number[][]): PartitionEntry[] {
  return layout.map((hosts, partition) => ({ partition, hosts: [...hosts] }));
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * Checks a proposed full layout against the current one and the known node ids; returns it as
 * hosts-by-partition, or throws E_LAYOUT_INVALID naming each broken rule.
 */
export function validateLayout(input: unknown, current: readonly number[][], knownNodes: ReadonlySet<number>): number[][] {
  if (!Array.isArray(input)) throw new LogsvcError('E_LAYOUT_INVALID', 'layout must be a JSON array of {"partition", "hosts"} objects');
  if (input.length > MAX_PARTITIONS) throw new LogsvcError('E_LAYOUT_INVALID', `layout has ${input.length} partitions; at most ${MAX_PARTITIONS} are supported`);
  const problems: string[] = [];
  const byId = new Map<number, number[]>();
  input.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`entry ${i}: must be an object with "partition" and "hosts"`);
      return;
    }
    const e = entry as Record<string, unknown>;
    const extra = Object.keys(e).filter((k) => k !== 'partition' && k !== 'hosts');
    if (extra.length > 0) problems.push(`entry ${i}: unknown field ${extra.map((k) => `"${k}"`).join(', ')}`);
    if (!isInt(e.partition) || e.partition < 0) {
      problems.push(`entry ${i}: "partition" must be a non-negative integer`);
      return;
    }
    const id = e.partition;
    if (byId.has(id)) problems.push(`duplicate partition number ${id}`);
    if (!Array.isArray(e.hosts) || !e.hosts.every(isInt)) {
      problems.push(`partition ${id}: "hosts" must be an array of node ids`);
      return;
    }
    const hosts = e.hosts as number[];
    if (hosts.length === 0) problems.push(`partition ${id}: has no host; every partition needs at least one node or its events are never digested`);
    if (hosts.length > MAX_HOSTS_PER_PARTITION) problems.push(`partition ${id}: more than ${MAX_HOSTS_PER_PARTITION} hosts`);
    if (new Set(hosts).size !== hosts.length) problems.push(`partition ${id}: lists a host more than once`);
    for (const h of hosts) if (!knownNodes.has(h)) problems.push(`partition ${id}: unknown node id ${h}`);
    byId.set(id, hosts);
  });
  const count = input.length;
  if (count < current.length) problems.push(`the partition count cannot be lowered (current ${current.length}, proposed ${count})`);
  const missing: number[] = [];
  for (let i = 0; i < count && missing.length < 10; i++) if (!byId.has(i)) missing.push(i);
  if (missing.length > 0) problems.push(`partition numbers must run from 0 to ${count - 1} without gaps; missing ${missing.join(', ')}`);
  // A partition's only host may not be dropped in one step: list it with the new host first (the
  // partition is handed over), then remove it.
  const soleDropped = new Map<number, number[]>();
  current.forEach((hosts, p) => {
    const next = byId.get(p);
    if (hosts.length === 1 && next !== undefined && !next.includes(hosts[0]!)) soleDropped.set(hosts[0]!, [...(soleDropped.get(hosts[0]!) ?? []), p]);
  });
  for (const [node, ps] of soleDropped) {
    problems.push(`node ${node} is the only host of partition${ps.length > 1 ? 's' : ''} ${ps.slice(0, 20).join(', ')}${ps.length > 20 ? ', ...' : ''} and cannot be removed from ${ps.length > 1 ? 'them' : 'it'} in one change; list another node first, then remove it once the partition is handed over`);
  }
  if (problems.length > 0) throw new LogsvcError('E_LAYOUT_INVALID', `invalid partition layout: ${problems.join('; ')}`);
  return Array.from({ length: count }, (_, i) => byId.get(i)!);
}
