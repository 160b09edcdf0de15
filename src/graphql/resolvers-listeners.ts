/** Resolvers of ingest listeners (schema-listeners.graphql.ts) over ListenerService. */
import { LogsvcError } from '../lib/errors.js';
import type { IngestListenerDef } from '../global/index.js';
import type { ListenerInput } from '../ingest/listeners/listener-service.js';
import type { GraphqlContext } from './context.js';
import { parserShape, type FieldResolver } from './resolvers-files-parsers.js';
import { repositoryShape } from './resolvers.js';

type Args = Record<string, unknown>;

function service(ctx: GraphqlContext) {
  const s = ctx.services.listeners;
  if (s === undefined) throw new LogsvcError('E_NOT_CONFIGURED', 'ingest listeners are not available on this node');
  return s;
}

function listenerShape(l: IngestListenerDef, ctx: GraphqlContext) {
  const repo = () => service(ctx).repositoryOf(l);
  return {
    id: l.id,
    name: l.name,
    protocol: l.protocol,
    bindInterface: l.bindInterface,
    port: l.port,
    charset: l.charset,
    vHost: l.vHost,
    repository: () => repositoryShape(repo(), ctx),
    parser: () => {
      const found = ctx.services.parsers.find(ctx.principal, repo(), { name: l.parser });
      return found === null ? null : parserShape(found);
    },
  };
}

function inputOf(a: Args): ListenerInput {
  const i = a.input as Record<string, unknown>;
  return {
    repositoryName: i.repositoryName as string,
    name: i.name as string,
    protocol: i.protocol as string,
    port: i.port as number,
    bindInterface: (i.bindInterface as string | null | undefined) ?? null,
    parser: ((i.parser ?? i.parserId) as string | null | undefined) ?? null,
    charset: (i.charset as string | null | undefined) ?? null,
    vHost: (i.vHost as number | null | undefined) ?? null,
  };
}

export const listenerMutations: Record<string, (args: Args, ctx: GraphqlContext) => unknown> = {
  createIngestListenerV3: async (a, ctx) => listenerShape(await service(ctx).create(ctx.principal, inputOf(a)), ctx),
  updateIngestListenerV3: async (a, ctx) => listenerShape(await service(ctx).update(ctx.principal, (a.input as { id: string }).id, inputOf(a)), ctx),
  deleteIngestListener: async (a, ctx) => {
    await service(ctx).delete(ctx.principal, a.id as string);
    return { __typename: 'BooleanResultType', result: true };
  },
};

export const listenerRepositoryFields: Record<string, FieldResolver> = {
  ingestListeners: (src, _a, ctx) => service(ctx).list(ctx.principal, (src as { name: string }).name).map((l) => listenerShape(l, ctx)),
};
