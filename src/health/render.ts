/** The text and JSON forms of a health report (layouts from the product's documentation). */
import type { HealthReport } from './health-service.js';

/** Where the checks are explained: docs/health.md in the logsvc source tree. */
export const HEALTH_DOC = 'docs/health.md';

export function renderHealthText(r: HealthReport): string {
  const count = (s: string): number => r.checks.filter((c) => c.status === s).length;
  const lines = [
    `${r.status} - ${r.statusMessage}`,
    `Uptime: ${r.uptime}`,
    `logsvc version: ${r.version}`,
    `Health Check Documentation: ${HEALTH_DOC}`,
    '',
    `Individual checks (DOWN=${count('DOWN')} WARN=${count('WARN')} OK=${count('OK')}):`,
  ];
  for (const c of r.checks) {
    const kv = Object.entries(c.fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const detail = [kv, c.statusMessage === '' ? '' : `(${c.statusMessage})`].filter((x) => x !== '').join(' ');
    lines.push(`  ${c.name} [${c.status}]: ${detail}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

export function renderHealthJson(r: HealthReport): Record<string, unknown> {
  const downs = r.checks.filter((c) => c.status === 'DOWN');
  return {
    // The documented JSON form names the failed overall state ERROR; checks keep DOWN.
    status: r.status === 'DOWN' ? 'ERROR' : r.status,
    statusMessage: r.statusMessage,
    uptime: r.uptime,
    version: r.version,
    oks: r.checks.filter((c) => c.status === 'OK'),
    warnings: r.checks.filter((c) => c.status === 'WARN'),
    downs,
    // humioctl decodes "down"; both spellings carry the same list.
    down: downs,
  };
}
