/** Health check results and the rules that combine them, as the product defines them. */

export type CheckStatus = 'OK' | 'WARN' | 'DOWN';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  statusMessage: string;
  fields: Record<string, string>;
}

const RANK: Record<CheckStatus, number> = { OK: 0, WARN: 1, DOWN: 2 };

export function worst(statuses: Iterable<CheckStatus>): CheckStatus {
  let w: CheckStatus = 'OK';
  for (const s of statuses) if (RANK[s] > RANK[w]) w = s;
  return w;
}

/** "5m58s (358s)": the product's uptime form. */
export function formatUptime(ms: number): string {
  const total = Math.floor(ms / 1000);
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const human = (d > 0 ? `${d}d` : '') + (d > 0 || h > 0 ? `${h}h` : '') + (d > 0 || h > 0 || m > 0 ? `${m}m` : '') + `${s}s`;
  return `${human} (${total}s)`;
}

export function thresholdStatus(value: number, warnAt: number, downAt: number): CheckStatus {
  if (value >= downAt) return 'DOWN';
  if (value >= warnAt) return 'WARN';
  return 'OK';
}
