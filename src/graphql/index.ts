/**
 * The GraphQL endpoint's core: the executable schema and a graphql-http handler (this folder is the
 * home of graphql and graphql-http). `src/http` adapts uWebSockets.js requests to `GraphqlRequest`.
 */
import { buildSchema, GraphQLObjectType, GraphQLError, parse, type GraphQLSchema, type GraphQLFieldResolver } from 'graphql';
import { createHandler, type Request as GhRequest } from 'graphql-http';
import { isLogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { GraphqlContext } from './context.js';
import { costLimitRule } from './limits.js';
import { mutationResolvers, queryResolvers } from './resolvers.js';
import { DateTime, Long, RepoOrViewName } from './scalars.js';
import { SDL } from './schema.graphql.js';
import { FILES_PARSERS_SDL } from './schema-files-parsers.graphql.js';
import { filesParsersMutations, repositoryFieldResolvers } from './resolvers-files-parsers.js';
import { ALERTING_SDL } from './schema-alerting.graphql.js';
import { alertingMutationResolvers } from './resolvers-alerting.js';
import { LISTENERS_SDL } from './schema-listeners.graphql.js';
import { listenerMutations, listenerRepositoryFields } from './resolvers-listeners.js';
import { LIFECYCLE_SDL } from './schema-lifecycle.graphql.js';
import { lifecycleMutationResolvers } from './resolvers-lifecycle.js';
import { GROUPS_SDL } from './schema-groups.graphql.js';
import { groupMutationResolvers, groupQueryResolvers } from './resolvers-groups.js';
import { REDACTION_SDL } from './schema-redaction.graphql.js';
import { redactionMutationResolvers, redactionQueryResolvers } from './resolvers-redaction.js';

export type { GraphqlContext, GraphqlServices, StorageStats } from './context.js';

/** Lexer tokens allowed in one document: bounds parse work before any validation runs. */
const MAX_TOKENS = 20_000;

export function buildExecutableSchema(): GraphQLSchema {
  // noLocation: the schema's AST keeps no source locations (~0.6 MB of Token and Location objects).
  const schema = buildSchema(SDL + FILES_PARSERS_SDL + ALERTING_SDL + LISTENERS_SDL + LIFECYCLE_SDL + GROUPS_SDL + REDACTION_SDL, { noLocation: true });
  const attach = (typeName: string, resolvers: Record<string, (args: Record<string, unknown>, ctx: GraphqlContext) => unknown>): void => {
    const type = schema.getType(typeName) as GraphQLObjectType;
    const fields = type.getFields();
    for (const [name, fn] of Object.entries(resolvers)) {
      const field = fields[name];
      if (field === undefined) throw new Error(`resolver ${typeName}.${name} has no field in the schema`);
      const resolve: GraphQLFieldResolver<unknown, GraphqlContext> = (_src, args, ctx) => fn(args, ctx);
      field.resolve = resolve;
    }
    for (const name of Object.keys(fields)) {
      if (fields[name]!.resolve === undefined) throw new Error(`schema field ${typeName}.${name} has no resolver`);
    }
  };
  attach('Query', { ...queryResolvers, ...groupQueryResolvers, ...redactionQueryResolvers });
  attach('Mutation', { ...mutationResolvers, ...filesParsersMutations, ...alertingMutationResolvers, ...listenerMutations, ...lifecycleMutationResolvers, ...groupMutationResolvers, ...redactionMutationResolvers });
  // Fields of object types that need their parent (the repository) as well as arguments.
  const repoFields = (schema.getType('Repository') as GraphQLObjectType).getFields();
  for (const [name, fn] of Object.entries({ ...repositoryFieldResolvers, ...listenerRepositoryFields })) {
    const field = repoFields[name];
    if (field === undefined) throw new Error(`resolver Repository.${name} has no field in the schema`);
    field.resolve = (src, args, ctx: GraphqlContext) => fn(src, args, ctx);
  }
  // Scalars: swap in our implementations (buildSchema makes pass-through ones).
  Object.assign(schema.getType('DateTime')!, { serialize: DateTime.serialize, parseValue: DateTime.parseValue, parseLiteral: DateTime.parseLiteral });
  Object.assign(schema.getType('Long')!, { serialize: Long.serialize, parseValue: Long.parseValue, parseLiteral: Long.parseLiteral });
  Object.assign(schema.getType('RepoOrViewName')!, { serialize: RepoOrViewName.serialize, parseValue: RepoOrViewName.parseValue, parseLiteral: RepoOrViewName.parseLiteral });
  return schema;
}

export interface GraphqlRequest {
  method: string;
  url: string;
  headers: ReadonlyMap<string, string>;
  body: string;
  context: GraphqlContext;
}

export interface GraphqlResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function createGraphqlEndpoint(opts: { maxDepth: number; maxFields: number; logger: Logger }): (req: GraphqlRequest) => Promise<GraphqlResponse> {
  const schema = buildExecutableSchema();
  const handler = createHandler<unknown, GraphqlContext, GraphqlContext>({
    schema,
    context: (req) => req.context,
    parse: (source) => parse(source, { maxTokens: MAX_TOKENS }),
    validationRules: [costLimitRule(opts.maxDepth, opts.maxFields)],
    formatError: (err) => {
      if (!(err instanceof GraphQLError)) return err;
      const orig = err.originalError;
      if (orig === undefined || orig === null || orig instanceof GraphQLError) return err;
      if (isLogsvcError(orig)) {
        return new GraphQLError(orig.message, { nodes: err.nodes ?? null, path: err.path ?? null, extensions: { code: orig.code, httpStatus: orig.httpStatus } });
      }
      opts.logger.error('GraphQL resolver failed', { path: err.path?.join('.'), error: orig.message });
      return new GraphQLError('internal error; see the node log', { nodes: err.nodes ?? null, path: err.path ?? null, extensions: { code: 'E_INTERNAL' } });
    },
  });
  return async (req) => {
    const ghReq: GhRequest<unknown, GraphqlContext> = {
      method: req.method,
      url: req.url,
      headers: { get: (k: string) => req.headers.get(k.toLowerCase()) ?? null },
      body: req.body,
      raw: null,
      context: req.context,
    };
    const [body, init] = await handler(ghReq);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(init.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    return { status: init.status, headers, body: body ?? '' };
  };
}
