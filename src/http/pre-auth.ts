/**
 * The credential check the server runs before it reads a request body (issue 24, defect 3): every
 * route that takes a body gets it, new routes included, unless it says otherwise (Route.preAuth).
 * A stranger's 32 MiB upload is refused from its headers, not buffered first.
 */
import { LogsvcError } from '../lib/errors.js';
import { requestCredentials, type HttpServices } from './context.js';
import type { BeforeBody } from './types.js';

export function preBodyAuth(s: Pick<HttpServices, 'auth'>): BeforeBody {
  return (route, req) => {
    if (route.body === 'none') return undefined;
    const mode = route.preAuth ?? (route.body === 'ingest' ? 'any' : 'api');
    if (mode === 'public') return undefined;
    if (typeof mode === 'function') return mode(req);
    const creds = requestCredentials(req);
    if (mode === 'api') {
      s.auth.apiPrincipal(creds);
      return undefined;
    }
    try {
      // First as an ingest token (which basic auth may carry as the user name or the password).
      s.auth.ingestPrincipal(creds);
    } catch (err) {
      if (!(err instanceof LogsvcError)) throw err;
      s.auth.apiPrincipal(creds);
    }
    return undefined;
  };
}
