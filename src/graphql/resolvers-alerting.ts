/**
 * Resolvers of the alerting schema: alert and action shapes as the product's GraphQL returns them,
 * the search-domain fields that list them, and the create/update/delete mutations. The services
 * (src/alerts) own every rule; this file only translates.
 */
import { LogsvcError } from '../lib/errors.js';
import { GRAPHQL_FIELDS, type ActionView, type AlertInput, type AlertView } from '../alerts/index.js';
import type { ActionKind } from '../global/index.js';
import type { GraphqlContext } from './context.js';
import { userShape } from './resolvers.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

const TYPENAME: Record<ActionView['props']['kind'], string> = {
  webhook: 'WebhookAction',
  slack: 'SlackAction',
  email: 'EmailAction',
  repository: 'HumioRepoAction',
  pagerduty: 'PagerDutyAction',
  opsgenie: 'OpsGenieAction',
  victorops: 'VictorOpsAction',
};

export function actionShape(a: ActionView): Record<string, unknown> {
  const { kind: _kind, ...props } = a.props;
  const extra = a.props.kind === 'email' ? { attachCsv: false } : {};
  return { __typename: TYPENAME[a.props.kind], id: a.id, name: a.name, displayName: a.name, ...props, ...extra };
}

export function alertShape(v: AlertView, ctx: GraphqlContext): Record<string, unknown> {
  const a = v.alert;
  const owner = a.ownership;
  return {
    id: a.id,
    name: a.name,
    displayName: a.name,
    description: a.description,
    queryString: a.queryString,
    queryStart: a.queryStart,
    throttleTimeMillis: a.throttleTimeMillis,
    throttleField: a.throttleField === '' ? null : a.throttleField,
    timeOfLastTrigger: v.lastTriggeredAt,
    enabled: !a.silenced,
    actions: [...a.actions],
    actionsV2: () => ctx.services.actions.list(ctx.principal, v.repositoryName, a.actions).map(actionShape),
    lastError: v.lastError,
    lastWarnings: [],
    labels: [...a.labels],
    isStarred: false,
    queryOwnership:
      owner.kind === 'user'
        ? { __typename: 'UserOwnership', id: owner.userId, user: () => userOrNull(ctx, owner.userId) }
        : { __typename: 'OrganizationOwnership', id: 'organization' },
    runAsUser: () => (owner.kind === 'user' ? userOrNull(ctx, owner.userId) : null),
  };
}

function userOrNull(ctx: GraphqlContext, id: string): unknown {
  const u = ctx.services.users.byId(id);
  return u === undefined ? null : userShape(u);
}

/** The alerting fields of a Repository / SearchDomain object. */
/** The alerts and actions of a repository or a view. */
export function alertingFields(r: { name: string }, ctx: GraphqlContext): Record<string, unknown> {
  const { alerts, actions } = ctx.services;
  return {
    alerts: () => alerts.list(ctx.principal, r.name).map((v) => alertShape(v, ctx)),
    alert: (a: Args) => alertShape(alerts.get(ctx.principal, r.name, a.id as string), ctx),
    actions: (a: Args) => actions.list(ctx.principal, r.name, (a.actionIds as string[] | null | undefined) ?? undefined).map(actionShape),
    action: (a: Args) => actionShape(actions.get(ctx.principal, r.name, a.id as string)),
  };
}

export function alertInput(i: Args): AlertInput {
  return {
    name: i.name,
    description: i.description,
    queryString: i.queryString,
    queryStart: i.queryStart,
    throttleTimeMillis: i.throttleTimeMillis,
    throttleField: i.throttleField,
    // `enabled` absent on create means enabled.
    silenced: typeof i.enabled === 'boolean' ? !i.enabled : false,
    actions: i.actions,
    labels: i.labels,
    runAsUserId: i.runAsUserId,
    ownershipType: i.queryOwnershipType,
  };
}

function createAction(kind: ActionKind): Resolver {
  return async (a, ctx) => {
    const { viewName, name, ...props } = a.input as Args;
    return actionShape(await ctx.services.actions.create(ctx.principal, viewName as string, kind, name, props));
  };
}

export const alertingMutationResolvers: Record<string, Resolver> = {
  createAlert: async (a, ctx) => {
    const i = a.input as Args;
    return alertShape(await ctx.services.alerts.create(ctx.principal, i.viewName as string, alertInput(i), GRAPHQL_FIELDS), ctx);
  },
  updateAlert: async (a, ctx) => {
    const i = a.input as Args;
    return alertShape(await ctx.services.alerts.update(ctx.principal, i.viewName as string, i.id as string, alertInput(i), GRAPHQL_FIELDS), ctx);
  },
  deleteAlert: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.alerts.delete(ctx.principal, i.viewName as string, i.id as string);
    return true;
  },
  createWebhookAction: createAction('webhook'),
  createSlackAction: createAction('slack'),
  createEmailAction: createAction('email'),
  createHumioRepoAction: createAction('repository'),
  createPagerDutyAction: createAction('pagerduty'),
  createOpsGenieAction: createAction('opsgenie'),
  createVictorOpsAction: createAction('victorops'),
  createSlackPostMessageAction: () => {
    throw new LogsvcError('E_VALIDATION', 'Slack post-message actions (Slack API token and channels) are not built in logsvc; use a Slack incoming webhook action (createSlackAction)');
  },
  createUploadFileAction: () => {
    throw new LogsvcError('E_VALIDATION', 'upload-file actions (results written to a lookup file) are not built in logsvc');
  },
  deleteAction: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.actions.delete(ctx.principal, i.viewName as string, i.id as string);
    return true;
  },
};
