/**
 * The GraphQL endpoint, loaded at its first request: graphql, graphql-http, the resolvers and the
 * executable schema built from the SDL stay out of an idle node's memory until someone asks
 * (docs/benchmarks.md, "Idle RSS of an empty node"). The first request pays for loading them and
 * building the schema once; every later one goes straight to the built endpoint.
 */
import type { Logger } from '../lib/logger.js';
import type { GraphqlRequest, GraphqlResponse } from './index.js';

export type GraphqlEndpoint = (req: GraphqlRequest) => Promise<GraphqlResponse>;

export function lazyGraphqlEndpoint(opts: { maxDepth: number; maxFields: number; logger: Logger }): GraphqlEndpoint {
  let endpoint: Promise<GraphqlEndpoint> | null = null;
  return async (req) => {
    endpoint ??= import('./index.js').then((m) => m.createGraphqlEndpoint(opts));
    return (await endpoint)(req);
  };
}
