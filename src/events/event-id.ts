/**
 * Event ids, deterministic from the queue position: partition, record offset and index within the
 * record. Shaped like the product's ids (`<24 chars>_<n>_<n>_<epoch seconds>`): 4 hex digits of
 * partition + 20 of offset, then the index, 0, and the event's second.
 */
export function eventId(partition: number, offset: number, index: number, timestamp: number): string {
  return `${partition.toString(16).padStart(4, '0')}${offset.toString(16).padStart(20, '0')}_${index}_0_${Math.floor(timestamp / 1000)}`;
}

export function parseEventId(id: string): { partition: number; offset: number; index: number } | null {
  const m = /^([0-9a-f]{4})([0-9a-f]{20})_(\d+)_0_-?\d+$/.exec(id);
  if (m === null) return null;
  return { partition: Number.parseInt(m[1]!, 16), offset: Number.parseInt(m[2]!, 16), index: Number(m[3]) };
}
