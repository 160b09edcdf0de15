/**
 * GET /metrics: Prometheus text exposition. Open to loopback peers when metrics.open_on_loopback
 * (the default); otherwise (or from elsewhere) it takes metrics.token or a root API token.
 */
import { BlockList, isIP } from 'node:net';
import { parseAuthorization, requireRoot, tokenDigest, digestsEqual } from '../../auth/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import type { RequestInfo, Route } from '../types.js';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = /^(?:0{0,4}:){0,5}ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const a = v4 ?? address;
  const kind = isIP(a);
  if (kind === 0) return false;
  return LOOPBACK.check(a, kind === 4 ? 'ipv4' : 'ipv6');
}

export interface PrometheusEndpoint {
  render(): Promise<{ contentType: string; body: string }>;
  openOnLoopback: boolean;
  /** metrics.token; empty when not set. */
  token: string;
}

function authorize(s: HttpServices, ep: PrometheusEndpoint, req: RequestInfo): void {
  if (ep.openOnLoopback && isLoopback(req.remoteAddress)) return;
  if (ep.token !== '') {
    const creds = parseAuthorization(req.headers.get('authorization'));
    if (creds !== null && digestsEqual(tokenDigest(creds.token), tokenDigest(ep.token))) return;
  }
  requireRoot(apiPrincipal(s, req), 'reading /metrics from a non-loopback address (or send metrics.token)');
}

export function metricsRoutes(s: HttpServices): Route[] {
  const ep = s.prometheus;
  if (ep === null) return [];
  return [
    {
      method: 'GET',
      pattern: '/metrics',
      body: 'none',
      handle: async (req) => {
        authorize(s, ep, req);
        const { contentType, body } = await ep.render();
        return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body };
      },
    },
  ];
}
