/**
 * Validation of an alert definition, shared by REST and GraphQL: each caller names the fields the
 * way its client wrote them (`query.start` in REST, `queryStart` in GraphQL), so a 400 names the
 * field the client sent. Action references are resolved here: ids, or an unambiguous action name.
 */
import { LogsvcError } from '../lib/errors.js';
import { parseRelative } from '../query/time.js';
import type { ActionDefinition, AlertDefinition } from '../global/index.js';
import { checkName } from './action-service.js';
import { MAX_ALERT_ACTIONS, MAX_DESCRIPTION_CHARS, MAX_FIELD_NAME_CHARS, MAX_LABEL_CHARS, MAX_LABELS, MAX_QUERY_CHARS, MAX_THROTTLE_MS, MAX_WINDOW_MS } from './limits.js';

/** An alert as a client sent it, before validation (REST and GraphQL map their shapes onto it). */
export interface AlertInput {
  name: unknown;
  description: unknown;
  queryString: unknown;
  queryStart: unknown;
  throttleTimeMillis: unknown;
  throttleField: unknown;
  silenced: unknown;
  actions: unknown;
  labels: unknown;
  runAsUserId?: unknown;
  ownershipType?: unknown;
}

export type AlertField = keyof AlertInput;
export type FieldNames = Record<AlertField, string>;

export const REST_FIELDS: FieldNames = {
  name: 'name',
  description: 'description',
  queryString: 'query.queryString',
  queryStart: 'query.start',
  throttleTimeMillis: 'throttleTimeMillis',
  throttleField: 'throttleField',
  silenced: 'silenced',
  actions: 'notifiers',
  labels: 'labels',
  runAsUserId: 'runAsUserId',
  ownershipType: 'queryOwnershipType',
};

export const GRAPHQL_FIELDS: FieldNames = { ...REST_FIELDS, queryString: 'queryString', queryStart: 'queryStart', silenced: 'enabled', actions: 'actions' };

/** The validated, resolved parts of a definition (ownership is decided by the service). */
export type CheckedAlert = Omit<AlertDefinition, 'id' | 'repositoryId' | 'ownership' | 'createdAt'>;

const bad = (field: string, message: string): LogsvcError => new LogsvcError('E_VALIDATION', `${field}: ${message}`);

function optionalString(v: unknown, field: string, max: number): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw bad(field, 'must be a string');
  if (v.length > max) throw bad(field, `longer than ${max} characters`);
  return v;
}

function stringList(v: unknown, field: string, maxItems: number, maxChars: number): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(field, 'must be a list of strings');
  if (v.length > maxItems) throw bad(field, `at most ${maxItems} entries`);
  return v.map((x, i) => {
    if (typeof x !== 'string') throw bad(`${field}[${i}]`, 'must be a string');
    if (x.length > maxChars) throw bad(`${field}[${i}]`, `longer than ${maxChars} characters`);
    return x;
  });
}

/** Resolves each reference to an action id of the repository: an id, or a name that names exactly one action. */
function resolveActions(refs: string[], field: string, actions: readonly ActionDefinition[], repositoryName: string): string[] {
  const out: string[] = [];
  refs.forEach((ref, i) => {
    let found = actions.find((a) => a.id === ref);
    if (found === undefined) {
      const named = actions.filter((a) => a.name === ref);
      if (named.length === 1) found = named[0];
    }
    if (found === undefined) throw bad(`${field}[${i}]`, `action "${ref.slice(0, 200)}" does not exist in repository "${repositoryName}"`);
    if (!out.includes(found.id)) out.push(found.id);
  });
  return out;
}

export interface CheckContext {
  names: FieldNames;
  repositoryName: string;
  actions: readonly ActionDefinition[];
  /** Throws an E_QUERY error when the query does not compile. */
  validateQuery: (queryString: string, queryStart: string) => void;
}

export function checkAlert(i: AlertInput, c: CheckContext): CheckedAlert {
  const n = c.names;
  const name = checkName(i.name, n.name);
  const description = optionalString(i.description, n.description, MAX_DESCRIPTION_CHARS);

  if (typeof i.queryString !== 'string') throw bad(n.queryString, 'required, a string (may be empty: all events)');
  if (i.queryString.length > MAX_QUERY_CHARS) throw bad(n.queryString, `longer than ${MAX_QUERY_CHARS} characters`);
  const queryString = i.queryString;
  if (typeof i.queryStart !== 'string') throw bad(n.queryStart, 'required, a relative time such as "10m" or "1h"');
  const windowMs = parseRelative(i.queryStart);
  if (windowMs === null) throw bad(n.queryStart, `"${i.queryStart.slice(0, 100)}" is not a relative time (a number and a unit such as "30s", "10m", "24h")`);
  if (windowMs <= 0 || windowMs > MAX_WINDOW_MS) throw bad(n.queryStart, 'must be more than 0 and at most 365 days');
  const queryStart = i.queryStart.trim();
  try {
    c.validateQuery(queryString, queryStart);
  } catch (err) {
    if (err instanceof LogsvcError) throw new LogsvcError(err.code, `${n.queryString}: ${err.message}`);
    throw err;
  }

  // Absent: the query window, the product UI's default.
  let throttleTimeMillis = windowMs;
  if (i.throttleTimeMillis !== undefined && i.throttleTimeMillis !== null) {
    const t = i.throttleTimeMillis;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0) throw bad(n.throttleTimeMillis, 'must be a non-negative integer (milliseconds)');
    if (t > MAX_THROTTLE_MS) throw bad(n.throttleTimeMillis, `at most ${MAX_THROTTLE_MS} (365 days)`);
    throttleTimeMillis = t;
  }
  const throttleField = optionalString(i.throttleField, n.throttleField, MAX_FIELD_NAME_CHARS).trim();

  let silenced = false;
  if (i.silenced !== undefined && i.silenced !== null) {
    if (typeof i.silenced !== 'boolean') throw bad(n.silenced, 'must be true or false');
    silenced = i.silenced;
  }
  const refs = stringList(i.actions, n.actions, MAX_ALERT_ACTIONS, 1000);
  const actions = resolveActions(refs, n.actions, c.actions, c.repositoryName);
  const labels = stringList(i.labels, n.labels, MAX_LABELS, MAX_LABEL_CHARS);
  return { name, description, queryString, queryStart, throttleTimeMillis, throttleField, silenced, actions, labels };
}
