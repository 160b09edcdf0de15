/**
 * A stopping node takes no new work (issue 24): from the start of its stop (SIGTERM/SIGINT, or its
 * cluster being stopped) a new query or ingest request is refused 503 + `Retry-After` with
 * E_NODE_STOPPING, before any byte of its body is read, while requests that arrived before the stop
 * finish within the bounded stop (src/node/stop.ts). Every route this gates has a body, so the
 * check runs where the credential check does (Router.beforeBody), at the request's arrival.
 */
import { LogsvcError } from '../lib/errors.js';
import type { BeforeBody, Route } from './types.js';

/** New work: every ingest route (the API's, the shippers' doors) and starting a query (/query, /queryjobs). */
export function startsWork(r: Route): boolean {
  if (r.body === 'none') return false;
  return r.body === 'ingest' || (r.method === 'POST' && /\/(query|queryjobs)$/.test(r.pattern));
}

export function stoppingError(what: string): LogsvcError {
  return new LogsvcError('E_NODE_STOPPING', `this node is stopping (shutting down) and takes no new ${what}; send the request to another node, or retry once it has restarted`);
}

/** `next` with the stopping check in front of it for the routes that start work. */
export function gateWhileStopping(isStopping: () => boolean, next: BeforeBody): BeforeBody {
  return (route, req) => {
    if (isStopping() && startsWork(route)) throw stoppingError(route.body === 'ingest' ? 'ingest' : 'queries');
    return next(route, req);
  };
}
