/**
 * The properties of each action type (api-facts §5.3) and their validation: one check per field,
 * each failure a 400 naming the field. The GraphQL create mutations hand their input objects here.
 */
import { LogsvcError } from '../lib/errors.js';
import type { ActionKind } from '../global/index.js';
import {
  MAX_HEADER_VALUE_CHARS,
  MAX_HEADERS,
  MAX_RECIPIENTS,
  MAX_SECRET_CHARS,
  MAX_SLACK_FIELDS,
  MAX_TEMPLATE_CHARS,
  MAX_URL_CHARS,
} from './limits.js';

export const WEBHOOK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export const VICTOROPS_MESSAGE_TYPES = ['CRITICAL', 'WARNING', 'ACKNOWLEDGEMENT', 'INFO', 'RECOVERY'] as const;
export const DEFAULT_OPSGENIE_URL = 'https://api.opsgenie.com';

export type ActionProperties =
  | { kind: 'webhook'; url: string; method: string; headers: { header: string; value: string }[]; bodyTemplate: string; ignoreSSL: boolean; useProxy: boolean }
  | { kind: 'slack'; url: string; fields: { fieldName: string; value: string }[]; useProxy: boolean }
  | { kind: 'email'; recipients: string[]; subjectTemplate: string; bodyTemplate: string; useProxy: boolean }
  | { kind: 'repository'; ingestToken: string }
  | { kind: 'pagerduty'; severity: string; routingKey: string; useProxy: boolean }
  | { kind: 'opsgenie'; apiUrl: string; genieKey: string; useProxy: boolean }
  | { kind: 'victorops'; messageType: string; notifyUrl: string; useProxy: boolean };

/** Headers the HTTP client sets itself; a webhook may not override them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const EMAIL = /^[^\s@<>,;"]{1,64}@[^\s@<>,;"]{1,255}$/;

type Input = Record<string, unknown>;

const bad = (field: string, message: string): LogsvcError => new LogsvcError('E_VALIDATION', `${field}: ${message}`);

function str(i: Input, field: string, opts: { max: number; required?: boolean; fallback?: string }): string {
  const v = i[field];
  if (v === undefined || v === null) {
    if (opts.required === true) throw bad(field, 'required');
    return opts.fallback ?? '';
  }
  if (typeof v !== 'string') throw bad(field, 'must be a string');
  if (v.length > opts.max) throw bad(field, `longer than ${opts.max} characters`);
  if (opts.required === true && v.trim() === '') throw bad(field, 'must not be empty');
  return v;
}

function bool(i: Input, field: string): boolean {
  const v = i[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw bad(field, 'must be true or false');
  return v;
}

function httpUrl(i: Input, field: string, fallback?: string): string {
  const v = str(i, field, { max: MAX_URL_CHARS, required: fallback === undefined, ...(fallback === undefined ? {} : { fallback }) }) || (fallback ?? '');
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw bad(field, `"${v.slice(0, 200)}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(field, 'must be an http or https URL');
  if (u.username !== '' || u.password !== '') throw bad(field, 'credentials in the URL are not supported; use a header');
  return v;
}

function oneOf<T extends string>(i: Input, field: string, values: readonly T[], fold: (s: string) => string): T {
  const v = fold(str(i, field, { max: 100, required: true }));
  if (!(values as readonly string[]).includes(v)) throw bad(field, `must be one of ${values.join(', ')}`);
  return v as T;
}

function list<T>(i: Input, field: string, max: number, item: (v: unknown, where: string) => T): T[] {
  const v = i[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(field, 'must be a list');
  if (v.length > max) throw bad(field, `at most ${max} entries`);
  return v.map((x, n) => item(x, `${field}[${n}]`));
}

function entry(v: unknown, where: string, keys: [string, string]): Input {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(where, `must be an object with "${keys[0]}" and "${keys[1]}"`);
  return v as Input;
}

function webhook(i: Input): ActionProperties {
  const headers = list(i, 'headers', MAX_HEADERS, (v, where) => {
    const e = entry(v, where, ['header', 'value']);
    const header = str(e, 'header', { max: 256, required: true });
    if (!HEADER_NAME.test(header)) throw bad(`${where}.header`, `"${header.slice(0, 100)}" is not a valid header name`);
    if (RESERVED_HEADERS.has(header.toLowerCase())) throw bad(`${where}.header`, `"${header}" is set by the HTTP client and cannot be given`);
    const value = str(e, 'value', { max: MAX_HEADER_VALUE_CHARS });
    if (/[\r\n\0]/.test(value)) throw bad(`${where}.value`, 'must not contain line breaks');
    return { header, value };
  });
  return {
    kind: 'webhook',
    url: httpUrl(i, 'url'),
    method: oneOf(i, 'method', WEBHOOK_METHODS, (s) => s.toUpperCase()),
    headers,
    bodyTemplate: str(i, 'bodyTemplate', { max: MAX_TEMPLATE_CHARS }),
    ignoreSSL: bool(i, 'ignoreSSL'),
    useProxy: bool(i, 'useProxy'),
  };
}

function slack(i: Input): ActionProperties {
  const fields = list(i, 'fields', MAX_SLACK_FIELDS, (v, where) => {
    const e = entry(v, where, ['fieldName', 'value']);
    return { fieldName: str(e, 'fieldName', { max: 256, required: true }), value: str(e, 'value', { max: MAX_TEMPLATE_CHARS }) };
  });
  return { kind: 'slack', url: httpUrl(i, 'url'), fields, useProxy: bool(i, 'useProxy') };
}

function email(i: Input): ActionProperties {
  const recipients = list(i, 'recipients', MAX_RECIPIENTS, (v, where) => {
    if (typeof v !== 'string' || !EMAIL.test(v.trim())) throw bad(where, `${JSON.stringify(v)?.slice(0, 100)} is not an email address`);
    return v.trim();
  });
  if (recipients.length === 0) throw bad('recipients', 'at least one email address');
  if (i.attachCsv === true) throw bad('attachCsv', 'CSV attachments are not built yet; leave attachCsv out or false');
  return {
    kind: 'email',
    recipients,
    subjectTemplate: str(i, 'subjectTemplate', { max: MAX_TEMPLATE_CHARS }),
    bodyTemplate: str(i, 'bodyTemplate', { max: MAX_TEMPLATE_CHARS }),
    useProxy: bool(i, 'useProxy'),
  };
}

function secret(i: Input, field: string): string {
  const v = str(i, field, { max: MAX_SECRET_CHARS, required: true });
  if (/[\s\0]/.test(v)) throw bad(field, 'must not contain whitespace');
  return v;
}

/** Validates `input` (a GraphQL create input, minus viewName and name) as properties of `kind`. */
export function actionProperties(kind: ActionKind, input: Input): ActionProperties {
  switch (kind) {
    case 'webhook':
      return webhook(input);
    case 'slack':
      return slack(input);
    case 'email':
      return email(input);
    case 'repository':
      return { kind: 'repository', ingestToken: secret(input, 'ingestToken') };
    case 'pagerduty':
      return {
        kind: 'pagerduty',
        severity: oneOf(input, 'severity', PAGERDUTY_SEVERITIES, (s) => s.toLowerCase()),
        routingKey: secret(input, 'routingKey'),
        useProxy: bool(input, 'useProxy'),
      };
    case 'opsgenie':
      return { kind: 'opsgenie', apiUrl: httpUrl(input, 'apiUrl', DEFAULT_OPSGENIE_URL), genieKey: secret(input, 'genieKey'), useProxy: bool(input, 'useProxy') };
    case 'victorops':
      return {
        kind: 'victorops',
        messageType: oneOf(input, 'messageType', VICTOROPS_MESSAGE_TYPES, (s) => s.toUpperCase()),
        notifyUrl: httpUrl(input, 'notifyUrl'),
        useProxy: bool(input, 'useProxy'),
      };
    default: {
      const never: never = kind;
      throw new Error(`unknown action kind ${String(never)}`);
    }
  }
}
