/**
 * The UI's only door to the node: fetch with the API token from sessionStorage (never in a URL),
 * GraphQL, query jobs (create, poll, cancel), files and the UI helper endpoints. Same origin only.
 */

const TOKEN_KEY = 'logsvc.token';

export const session = {
  token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call(method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  const token = session.token();
  const h: Record<string, string> = { ...headers };
  if (token !== null) h.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers: h, credentials: 'omit' };
  if (body !== undefined) init.body = body;
  if (signal !== undefined) init.signal = signal;
  const res = await fetch(path, init);
  if (!res.ok) throw new ApiError(res.status, (await res.text()).trim() || `${res.status} ${res.statusText}`);
  return res;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await call('GET', path, undefined, { accept: 'application/json' })).json()) as T;
}

export async function postJson<T>(path: string, value: unknown, signal?: AbortSignal): Promise<T> {
  const res = await call('POST', path, JSON.stringify(value), { 'content-type': 'application/json', accept: 'application/json' }, signal);
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export async function del(path: string): Promise<void> {
  await call('DELETE', path);
}

export async function upload(path: string, file: File): Promise<void> {
  const form = new FormData();
  form.append('file', file, file.name);
  await call('POST', path, form);
}

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await postJson<{ data?: T; errors?: { message: string }[] }>('/graphql', { query, variables });
  if (r.errors !== undefined && r.errors.length > 0) throw new ApiError(400, r.errors.map((e) => e.message).join('; '));
  return r.data as T;
}

// --- query jobs ------------------------------------------------------------------------------------

export interface QueryBody {
  queryString: string;
  start: string | number;
  end?: string | number;
  isLive: boolean;
  timeZoneOffsetMinutes: number;
}

export type Row = Record<string, unknown>;

export interface JobPoll {
  done: boolean;
  cancelled: boolean;
  events: Row[];
  metaData: {
    eventCount: number;
    isAggregate: boolean;
    pollAfter: number;
    processedBytes: number;
    processedEvents: number;
    queryStart: number;
    queryEnd: number;
    timeMillis: number;
    totalWork: number;
    workDone: number;
    warnings?: string[];
    extraData?: Record<string, string>;
  };
}

const repoPath = (repo: string): string => `/api/v1/repositories/${encodeURIComponent(repo)}`;

/**
 * One query job: polls until done (or, live, until stopped), calling `onPoll` with every answer.
 * `stop()` deletes the job on the node.
 */
export class QueryJob {
  private stopped = false;
  private id: string | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly repo: string,
    private readonly body: QueryBody,
    private readonly onPoll: (p: JobPoll) => void,
    private readonly onError: (e: ApiError) => void,
  ) {}

  async start(): Promise<void> {
    try {
      const r = await postJson<{ id: string }>(`${repoPath(this.repo)}/queryjobs`, this.body);
      this.id = r.id;
      if (this.stopped) {
        void del(`${repoPath(this.repo)}/queryjobs/${encodeURIComponent(r.id)}`).catch(() => {});
        return;
      }
      await this.poll();
    } catch (e) {
      if (!this.stopped) this.onError(e instanceof ApiError ? e : new ApiError(0, String(e)));
    }
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.id === null) return;
    try {
      const p = await getJson<JobPoll>(`${repoPath(this.repo)}/queryjobs/${encodeURIComponent(this.id)}`);
      if (this.stopped) return;
      this.onPoll(p);
      if (p.done && !this.body.isLive) return;
      const wait = this.body.isLive ? 1000 : Math.min(Math.max(p.metaData.pollAfter, 50), 1000);
      this.timer = setTimeout(() => void this.poll(), wait);
    } catch (e) {
      if (!this.stopped) this.onError(e instanceof ApiError ? e : new ApiError(0, String(e)));
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.id !== null) void del(`${repoPath(this.repo)}/queryjobs/${encodeURIComponent(this.id)}`).catch(() => {});
  }
}

// --- the rest ---------------------------------------------------------------------------------------

export interface FunctionSignature {
  name: string;
  params: string[];
  aggregate: boolean;
}

let functionsCache: Promise<FunctionSignature[]> | null = null;
export function queryFunctions(): Promise<FunctionSignature[]> {
  functionsCache ??= getJson<FunctionSignature[]>('/api/v1/ui/query-functions').catch((e: unknown) => {
    functionsCache = null;
    throw e;
  });
  return functionsCache;
}

export const paths = {
  files: (repo: string): string => `${repoPath(repo)}/files`,
  file: (repo: string, name: string): string => `${repoPath(repo)}/files/${encodeURIComponent(name)}`,
  parserTry: (repo: string): string => `${repoPath(repo)}/parsers/try`,
};
