/** POST (and GET) /graphql: authenticate, then hand the request to the graphql-http core. */
import { LogsvcError } from '../../lib/errors.js';
import { jsonDepth } from '../../lib/json.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import type { RequestInfo, Route } from '../types.js';

export function graphqlRoutes(s: HttpServices): Route[] {
  const handle = async (req: RequestInfo, body: Buffer) => {
    const principal = apiPrincipal(s, req);
    const text = body.toString('utf8');
    if (jsonDepth(text, s.maxJsonDepth) > s.maxJsonDepth) {
      throw new LogsvcError('E_JSON_TOO_DEEP', `GraphQL request: JSON nesting deeper than ${s.maxJsonDepth} levels`);
    }
    const query = req.query.toString();
    const res = await s.graphql({
      method: req.method,
      url: `${req.path}${query === '' ? '' : `?${query}`}`,
      headers: req.headers,
      body: text,
      context: { principal, services: s.graphqlServices },
    });
    return { status: res.status, headers: res.headers, body: res.body };
  };
  return [
    { method: 'POST', pattern: '/graphql', body: 'api', handle },
    { method: 'GET', pattern: '/graphql', body: 'none', handle },
  ];
}
