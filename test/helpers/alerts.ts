/**
 * Helpers for alert tests against a real node: actions through GraphQL, alerts through the REST
 * API, the alert's runtime state (last trigger, last error) polled until a condition holds.
 */
import { api, type ApiResponse } from './http.js';
import { mustGql } from './query.js';

export function alertsPath(repo: string, id?: string): string {
  return `/api/v1/repositories/${encodeURIComponent(repo)}/alerts${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
}

export async function restAlert(base: string, token: string, repo: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', body?: unknown, id?: string): Promise<ApiResponse> {
  return api(base, alertsPath(repo, id), { token, method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

export interface AlertBody {
  name: string;
  query: { queryString: string; start: string };
  throttleTimeMillis?: number;
  throttleField?: string;
  silenced?: boolean;
  notifiers: string[];
  description?: string;
  labels?: string[];
}

/** Creates an alert through REST; throws unless 200. Returns the stored alert. */
export async function createAlert(base: string, token: string, repo: string, body: AlertBody): Promise<Record<string, any>> {
  const res = await restAlert(base, token, repo, 'POST', body);
  if (res.status !== 200) throw new Error(`create alert ${body.name}: ${res.status} ${res.text}`);
  return res.json();
}

export async function getAlert(base: string, token: string, repo: string, id: string): Promise<Record<string, any>> {
  const res = await restAlert(base, token, repo, 'GET', undefined, id);
  if (res.status !== 200) throw new Error(`get alert ${id}: ${res.status} ${res.text}`);
  return res.json();
}

/** Polls the alert until `pred` holds; returns it. Throws after `timeoutMs` with the last state. */
export async function waitForAlert(base: string, token: string, repo: string, id: string, pred: (a: Record<string, any>) => boolean, timeoutMs = 30_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = await getAlert(base, token, repo, id);
    if (pred(a)) return a;
    if (Date.now() > deadline) throw new Error(`alert ${id} did not reach the expected state within ${timeoutMs} ms: ${JSON.stringify(a)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface WebhookOptions {
  method?: string;
  headers?: { header: string; value: string }[];
  bodyTemplate?: string;
}

export async function createWebhook(base: string, token: string, repo: string, name: string, url: string, o: WebhookOptions = {}): Promise<string> {
  const d = await mustGql(
    base,
    token,
    `mutation($v: String!, $n: String!, $u: String!, $m: String!, $h: [HttpHeaderEntryInput!]!, $b: String!) {
      createWebhookAction(input: {viewName: $v, name: $n, url: $u, method: $m, headers: $h, bodyTemplate: $b, ignoreSSL: false, useProxy: false}) { id }
    }`,
    { v: repo, n: name, u: url, m: o.method ?? 'POST', h: o.headers ?? [], b: o.bodyTemplate ?? '' },
  );
  return d.createWebhookAction.id as string;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
