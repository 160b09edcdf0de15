/** Resolvers of event redaction (schema-redaction.graphql.ts) over RedactionService. */
import type { RedactionTask } from '../global/index.js';
import type { RedactionService } from '../redaction/index.js';
import type { GraphqlContext } from './context.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

function shape(t: RedactionTask, s: RedactionService): Record<string, unknown> {
  const results = [...t.nodes.values()];
  return {
    id: t.id,
    created: t.createdAt,
    start: t.start,
    end: t.end,
    query: t.query,
    createdByUser: t.createdBy,
    languageVersion: { name: 'legacy' },
    status: s.statusOf(t),
    userMessage: t.userMessage,
    eventsRedacted: results.reduce((n, r) => n + r.eventsRedacted, 0),
    segmentsRewritten: results.reduce((n, r) => n + r.segmentsRewritten, 0),
    finishedOnNodes: [...t.nodes.keys()].sort((a, b) => a - b),
  };
}

export const redactionQueryResolvers: Record<string, Resolver> = {
  redactEvents: (a, ctx) => {
    const s = ctx.services.redactions;
    return s.list(ctx.principal, a.repositoryName as string, a.includeFinished === true).map((t) => shape(t, s));
  },
};

export const redactionMutationResolvers: Record<string, Resolver> = {
  redactEvents: (a, ctx) => {
    const i = a.input as Args;
    // DateTime arguments arrive as epoch ms (scalars.ts).
    return ctx.services.redactions.request(ctx.principal, { repositoryName: i.repositoryName, start: i.start, end: i.end, query: i.query, userMessage: i.userMessage });
  },
  cancelRedactEvents: (a, ctx) => {
    const i = a.input as Args;
    return ctx.services.redactions.cancel(ctx.principal, i.repositoryName as string, i.redactionTaskId as string);
  },
};
