/** A node's disk as the answering node knows it (its own, or a peer's from its heartbeats). */
export interface PeerDisk {
  diskTotal: number;
  diskFree: number;
  wipBytes: number;
}

/** What a node sends with every heartbeat (src/cluster/protocol/membership.ts carries it as is). */
export interface HeartbeatPayload {
  disk: PeerDisk;
}

/** A peer's disk from its heartbeat payload, or null when it sent none (an older build) or it is malformed. */
export function peerDiskOf(payload: unknown): PeerDisk | null {
  const disk = (payload as Partial<HeartbeatPayload> | null)?.disk;
  if (typeof disk !== 'object' || disk === null) return null;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  return { diskTotal: n(disk.diskTotal), diskFree: n(disk.diskFree), wipBytes: n(disk.wipBytes) };
}
