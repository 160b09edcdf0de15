/** Small HTTP helpers over the built-in fetch, for tests talking to a real node. */

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json<T = any>(): T;
}

export interface ApiOptions {
  method?: string;
  token?: string | undefined;
  headers?: Record<string, string>;
  body?: string | Buffer | Uint8Array;
  timeoutMs?: number;
}

export async function api(base: string, path: string, opts: ApiOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const init: RequestInit = {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
  };
  if (opts.body !== undefined) init.body = opts.body;
  const res = await fetch(new URL(path, base), init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: () => JSON.parse(text),
  };
}

export interface GqlResult<T = any> {
  status: number;
  data: T | null;
  errors: { message: string; extensions?: Record<string, unknown> }[] | undefined;
}

export async function gql<T = any>(base: string, token: string | undefined, query: string, variables?: Record<string, unknown>): Promise<GqlResult<T>> {
  const res = await api(base, '/graphql', { token, body: JSON.stringify({ query, variables }) });
  const body = res.text === '' ? {} : res.json();
  return { status: res.status, data: body.data ?? null, errors: body.errors };
}

/** Creates a user and returns its id and a fresh API token (via the admin token). */
export async function createUser(base: string, adminToken: string, username: string, isRoot = false): Promise<{ id: string; token: string }> {
  const add = await gql(base, adminToken, 'mutation($u: String!, $r: Boolean) { addUser(input: {username: $u, isRoot: $r}) { user { id } } }', { u: username, r: isRoot });
  if (add.errors !== undefined) throw new Error(`addUser failed: ${JSON.stringify(add.errors)}`);
  const id = add.data.addUser.user.id as string;
  const rot = await gql(base, adminToken, 'mutation($id: String!) { rotateUserApiTokenAndGet(input: {id: $id}) }', { id });
  if (rot.errors !== undefined) throw new Error(`rotate failed: ${JSON.stringify(rot.errors)}`);
  return { id, token: rot.data.rotateUserApiTokenAndGet as string };
}
