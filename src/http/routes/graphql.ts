/** POST (and GET) /graphql: authenticate, then hand the request to the graphql-http core. */
import { LogsvcError } from '../../lib/errors.js';
import { jsonDepth } from '../../lib/json.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import type { Reply, RequestInfo, Route } from '../types.js';

/**
 * GraphQL clients that ask for JSON (GraphiQL does) get a refusal as a GraphQL error body, so they
 * can show it; others (curl's *\/*) get the usual one-line text (the error is thrown on).
 */
function refusal(err: unknown, req: RequestInfo): Reply {
  const accept = req.headers.get('accept') ?? '';
  if (!(err instanceof LogsvcError) || !/application\/(graphql-response\+)?json/.test(accept)) throw err;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (err.httpStatus === 401) headers['www-authenticate'] = 'Bearer';
  return { status: err.httpStatus, headers, body: JSON.stringify({ errors: [{ message: err.message, extensions: { code: err.code } }] }) };
}

export function graphqlRoutes(s: HttpServices): Route[] {
  const handle = async (req: RequestInfo, body: Buffer) => {
    let principal;
    try {
      principal = apiPrincipal(s, req);
    } catch (err) {
      return refusal(err, req);
    }
    const text = body.toString('utf8');
    if (jsonDepth(text, s.maxJsonDepth) > s.maxJsonDepth) {
      throw new LogsvcError('E_JSON_TOO_DEEP', `GraphQL request: JSON nesting deeper than ${s.maxJsonDepth} levels`);
    }
    const query = req.query.toString();
    // curl -d sends form encoding by default and some clients send no type: the body is JSON either way.
    const type = req.headers.get('content-type');
    const headers = new Map(req.headers);
    if (req.method === 'POST' && (type === undefined || type.startsWith('application/x-www-form-urlencoded'))) headers.set('content-type', 'application/json');
    const res = await s.graphql({
      method: req.method,
      url: `${req.path}${query === '' ? '' : `?${query}`}`,
      headers,
      body: text,
      context: { principal, services: s.graphqlServices },
    });
    if (res.status >= 400 && res.body === '') {
      const why = res.status === 415 ? `unsupported content type "${type ?? ''}"; send application/json` : res.status === 406 ? 'Accept must allow application/json' : 'bad GraphQL request';
      return { status: res.status, headers: { ...res.headers, 'content-type': 'text/plain; charset=utf-8' }, body: `${why}\n` };
    }
    return { status: res.status, headers: res.headers, body: res.body };
  };
  return [
    {
      method: 'POST',
      pattern: '/graphql',
      body: 'api',
      handle,
      // Before the body, with the same refusal as the handler's.
      preAuth: (req) => {
        try {
          apiPrincipal(s, req);
        } catch (err) {
          return refusal(err, req);
        }
        return undefined;
      },
    },
    { method: 'GET', pattern: '/graphql', body: 'none', handle },
  ];
}
