/**
 * Deterministic, realistic log datasets for the benchmarks: a seeded PRNG (mulberry32) and three
 * generators — Apache/Nginx combined access-log lines, JSON application events with nested
 * attributes, and kv lines. The same (dataset, seed) always yields the same events, byte for byte.
 *
 * Each generator yields `{ rawstring, attributes, timestamp }`:
 * - `rawstring` is the line as a file would hold it (what unstructured ingest sends, and what the
 *   "raw bytes" of a run count);
 * - `attributes` is what a structured shipper that parsed the line would send (Vector's
 *   parse_nginx_log / parse_json / parse_key_value): for access logs the fields the node's own
 *   `accesslog` parser extracts, under the same names, for JSON the object itself, for kv the pairs.
 *   Structured and unstructured runs of one dataset therefore store the same events;
 * - `timestamp` is epoch milliseconds, advancing with random inter-arrival gaps.
 */

/** @typedef {{ rawstring: string, attributes: Record<string, unknown>, timestamp: number }} BenchEvent */
/** @typedef {'accesslog' | 'json' | 'kv'} DatasetName */

/** @type {readonly DatasetName[]} */
export const DATASET_NAMES = Object.freeze(/** @type {DatasetName[]} */ (['accesslog', 'json', 'kv']));

/** The node's built-in parser for each dataset's lines (unstructured ingest `type`). */
/** @type {Readonly<Record<DatasetName, string>>} */
export const PARSER_OF = Object.freeze({ accesslog: 'accesslog', json: 'json', kv: 'kv' });

/** Every dataset starts at this instant (2024-05-06T08:00:00Z), so runs are comparable. */
const EPOCH_START_MS = Date.UTC(2024, 4, 6, 8, 0, 0);

/**
 * mulberry32: a 32-bit state PRNG, fast and good enough for synthetic data (not for crypto).
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * FNV-1a of a string, to derive one independent stream per dataset from one user seed.
 * @param {string} s
 */
function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Random helpers over one PRNG stream. */
class Rng {
  /** @param {number} seed */
  constructor(seed) {
    this.next = mulberry32(seed);
  }

  /** @param {number} n @returns {number} integer in [0, n) */
  int(n) {
    return Math.floor(this.next() * n);
  }

  /** @param {number} lo @param {number} hi @returns {number} integer in [lo, hi] */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }

  /** @template T @param {readonly T[]} arr @returns {T} */
  pick(arr) {
    return /** @type {T} */ (arr[this.int(arr.length)]);
  }

  /**
   * Skewed pick: low indexes far more often (a few hot clients/paths, a long tail), like real traffic.
   * @template T @param {readonly T[]} arr @returns {T}
   */
  skewed(arr) {
    const u = this.next();
    return /** @type {T} */ (arr[Math.floor(u * u * u * arr.length)]);
  }

  /**
   * Weighted pick from [[value, weight], ...]; weights need not sum to 1.
   * @template T @param {readonly (readonly [T, number])[]} table @returns {T}
   */
  weighted(table) {
    let total = 0;
    for (const [, w] of table) total += w;
    let u = this.next() * total;
    for (const [v, w] of table) {
      u -= w;
      if (u < 0) return v;
    }
    return /** @type {T} */ (table[table.length - 1]?.[0]);
  }

  /** @param {number} mean @returns {number} exponential with this mean */
  exp(mean) {
    return -Math.log(1 - this.next()) * mean;
  }

  /** @param {number} median @param {number} sigma @returns {number} log-normal, heavy-tailed sizes/durations */
  logNormal(median, sigma) {
    // Box-Muller; one of the pair is enough here.
    const u1 = 1 - this.next();
    const u2 = this.next();
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return median * Math.exp(sigma * z);
  }

  /** @param {number} n @returns {string} n lowercase hex digits */
  hex(n) {
    let s = '';
    for (let i = 0; i < n; i++) s += HEX[this.int(16)];
    return s;
  }
}

const HEX = '0123456789abcdef';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** @param {number} n @param {number} w */
const pad = (n, w = 2) => String(n).padStart(w, '0');

/** @param {number} ms @returns {string} `06/May/2024:08:00:00 +0000` */
function clfDate(ms) {
  const d = new Date(ms);
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

// ---------------------------------------------------------------------------------------------
// Shared vocabularies
// ---------------------------------------------------------------------------------------------

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'curl/8.5.0',
  'python-requests/2.31.0',
  'Go-http-client/1.1',
  'okhttp/4.12.0',
  'Apache-HttpClient/4.5.14 (Java/17.0.10)',
  'kube-probe/1.29',
  'Prometheus/2.51.2',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
];

const FIRST_NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory', 'niaj', 'olivia', 'peggy', 'rupert', 'sybil', 'trent', 'victor', 'walter', 'yusuf'];
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'DK', 'SE', 'IN', 'BR', 'JP', 'CA', 'AU', 'NL', 'ES', 'PL'];
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-southeast-1'];
const PRODUCT_SLUGS = ['wireless-mouse', 'mechanical-keyboard', 'usb-c-hub', '4k-monitor', 'laptop-stand', 'noise-cancelling-headphones', 'webcam-1080p', 'ergonomic-chair', 'desk-lamp', 'ssd-2tb', 'router-wifi6', 'smart-plug'];
const CATEGORIES = ['electronics', 'office', 'audio', 'storage', 'networking', 'home'];

/** @param {Rng} r */
function ipv4(r) {
  // Mostly public-looking client addresses, some from a private range behind a proxy.
  return r.next() < 0.15 ? `10.${r.int(256)}.${r.int(256)}.${r.range(1, 254)}` : `${r.range(1, 223)}.${r.int(256)}.${r.int(256)}.${r.range(1, 254)}`;
}

// ---------------------------------------------------------------------------------------------
// Access logs
// ---------------------------------------------------------------------------------------------

const METHODS = /** @type {const} */ ([
  ['GET', 80],
  ['POST', 12],
  ['PUT', 3],
  ['DELETE', 2],
  ['HEAD', 2],
  ['OPTIONS', 1],
]);

const STATUSES = /** @type {const} */ ([
  [200, 80],
  [304, 5],
  [201, 2],
  [204, 1.5],
  [301, 1],
  [302, 1.5],
  [400, 1],
  [401, 1],
  [403, 0.5],
  [404, 4],
  [429, 0.5],
  [500, 1],
  [502, 0.5],
  [503, 0.5],
]);

const REFERER_SITES = ['https://www.example-shop.com/', 'https://www.example-shop.com/products', 'https://www.example-shop.com/cart', 'https://www.google.com/', 'https://duckduckgo.com/', 'https://t.co/x8Kd2pQ', 'https://news.ycombinator.com/'];

/**
 * A request path from a set of realistic templates (API calls with ids, static assets with content
 * hashes, pages with query strings).
 * @param {Rng} r
 * @param {string} method
 */
function accessPath(r, method) {
  if (method !== 'GET' && method !== 'HEAD') {
    return r.pick([
      `/api/v2/orders`,
      `/api/v2/cart/items`,
      `/api/v2/users/${r.range(1000, 99999)}/preferences`,
      `/api/v2/sessions`,
      `/api/v2/orders/${r.range(100000, 999999)}/cancel`,
      `/api/v2/cart/items/${r.range(1, 50)}`,
      `/graphql`,
    ]);
  }
  switch (r.weighted([
    ['asset', 35],
    ['page', 25],
    ['api', 30],
    ['infra', 10],
  ])) {
    case 'asset':
      return r.pick([
        `/static/js/main.${r.hex(8)}.js`,
        `/static/css/app.${r.hex(8)}.css`,
        `/static/img/products/${r.pick(PRODUCT_SLUGS)}-${r.range(1, 4)}.webp`,
        `/favicon.ico`,
        `/static/fonts/inter-var.woff2`,
      ]);
    case 'page':
      return r.pick([
        `/`,
        `/products/${r.pick(PRODUCT_SLUGS)}`,
        `/category/${r.pick(CATEGORIES)}?page=${r.range(1, 12)}&sort=${r.pick(['price', 'rating', 'newest'])}`,
        `/search?q=${r.pick(PRODUCT_SLUGS).replace(/-/g, '+')}&ref=nav`,
        `/cart`,
        `/account/orders`,
      ]);
    case 'api':
      return r.pick([
        `/api/v2/products/${r.range(1, 5000)}`,
        `/api/v2/products?category=${r.pick(CATEGORIES)}&limit=24&offset=${24 * r.int(10)}`,
        `/api/v2/users/${r.range(1000, 99999)}`,
        `/api/v2/cart`,
        `/api/v2/recommendations?user=${r.range(1000, 99999)}`,
        `/api/v2/inventory/${r.range(1, 5000)}/stock`,
      ]);
    default:
      return r.pick([`/healthz`, `/metrics`, `/robots.txt`, `/sitemap.xml`, `/.well-known/security.txt`]);
  }
}

/**
 * @param {number} seed
 * @returns {() => BenchEvent}
 */
function accessLogGenerator(seed) {
  const r = new Rng(seed);
  const clients = Array.from({ length: 2000 }, () => ipv4(r));
  const users = Array.from({ length: 300 }, () => `${r.pick(FIRST_NAMES)}${r.range(1, 999)}`);
  let t = EPOCH_START_MS;
  return () => {
    t += r.exp(2); // about 500 requests/s on the imagined site
    const ms = Math.floor(t);
    const client = r.skewed(clients);
    const userid = r.next() < 0.1 ? r.pick(users) : '-';
    const method = r.weighted(METHODS);
    const url = accessPath(r, method);
    const httpversion = r.next() < 0.7 ? 'HTTP/1.1' : 'HTTP/2.0';
    const status = method === 'POST' && r.next() < 0.5 ? 201 : r.weighted(STATUSES);
    const bytes = status === 304 || status === 204 || method === 'HEAD' ? 0 : Math.max(20, Math.round(url.startsWith('/static') ? r.logNormal(40_000, 1.2) : r.logNormal(2_500, 1)));
    const referer = r.next() < 0.4 ? '-' : r.pick(REFERER_SITES);
    const agent = r.skewed(USER_AGENTS);
    const responsetime = (r.logNormal(0.012, 1.1) + 0.0005).toFixed(3);
    const rawstring = `${client} - ${userid} [${clfDate(ms)}] "${method} ${url} ${httpversion}" ${status} ${bytes} "${referer}" "${agent}" ${responsetime}`;
    /** @type {Record<string, unknown>} */
    const attributes = { client };
    if (userid !== '-') attributes.userid = userid;
    attributes.method = method;
    attributes.url = url;
    attributes.httpversion = httpversion.slice(5);
    attributes.statuscode = String(status);
    attributes.responsesize = String(bytes);
    if (referer !== '-') attributes.referrer = referer;
    attributes.useragent = agent;
    attributes.responsetime = responsetime;
    return { rawstring, attributes, timestamp: ms };
  };
}

// ---------------------------------------------------------------------------------------------
// JSON application events
// ---------------------------------------------------------------------------------------------

const SERVICES = ['checkout', 'payments', 'catalog', 'auth', 'search', 'notifications', 'inventory'];
const LEVELS = /** @type {const} */ ([
  ['INFO', 78],
  ['DEBUG', 10],
  ['WARN', 8],
  ['ERROR', 4],
]);
const DB_TABLES = ['orders', 'order_items', 'users', 'products', 'inventory', 'sessions', 'payments'];
const ERROR_TYPES = ['TimeoutError', 'ConnectionResetError', 'ValidationError', 'UpstreamUnavailableError', 'DeadlockDetectedError'];

/**
 * @param {number} seed
 * @returns {() => BenchEvent}
 */
function jsonEventGenerator(seed) {
  const r = new Rng(seed);
  const hosts = Array.from({ length: 24 }, (_, i) => `${SERVICES[i % SERVICES.length]}-${r.hex(10)}-${r.hex(5)}`);
  const users = Array.from({ length: 500 }, (_, i) => ({
    id: 10_000 + i * 7 + r.int(7),
    name: r.pick(FIRST_NAMES),
    plan: r.weighted(/** @type {const} */ ([
      ['free', 70],
      ['pro', 25],
      ['enterprise', 5],
    ])),
    country: r.pick(COUNTRIES),
  }));
  let t = EPOCH_START_MS;
  return () => {
    t += r.exp(3);
    const ms = Math.floor(t);
    const level = r.weighted(LEVELS);
    const host = r.pick(hosts);
    const service = /** @type {string} */ (host.split('-')[0]);
    const user = r.skewed(users);
    const durationMs = Math.round(r.logNormal(18, 1.1) * 100) / 100;
    /** @type {Record<string, unknown>} */
    const ev = {
      '@timestamp': new Date(ms).toISOString(),
      level,
      service,
      host,
      region: r.pick(REGIONS),
      version: `2.${r.range(10, 14)}.${r.int(9)}`,
      trace: { trace_id: r.hex(32), span_id: r.hex(16) },
    };
    const kind = level === 'ERROR' ? 'error' : r.weighted(/** @type {const} */ ([
      ['http', 55],
      ['db', 25],
      ['job', 12],
      ['cache', 8],
    ]));
    if (kind === 'http' || kind === 'error') {
      const method = r.weighted(METHODS);
      const status = kind === 'error' ? r.pick([500, 502, 503, 504]) : r.weighted(STATUSES);
      ev.message = kind === 'error' ? `request failed: ${r.pick(ERROR_TYPES)}` : `${method} ${status} in ${durationMs} ms`;
      ev.user = { id: user.id, name: user.name, plan: user.plan, geo: { country: user.country } };
      ev.http = {
        request: {
          method,
          path: accessPath(r, method).split('?')[0],
          query: r.next() < 0.3 ? { page: r.range(1, 9), limit: 24 } : {},
          headers: { 'user-agent': r.skewed(USER_AGENTS), 'x-request-id': r.hex(16) },
          bytes: method === 'GET' ? 0 : r.range(80, 4000),
        },
        response: { status, bytes: Math.round(r.logNormal(1800, 1)), cached: r.next() < 0.2 },
      };
      ev.duration_ms = durationMs;
      if (kind === 'error') {
        const type = r.pick(ERROR_TYPES);
        ev.error = {
          type,
          message: `${type}: upstream ${r.pick(SERVICES)} did not answer within ${r.pick([500, 1000, 2000, 5000])} ms`,
          stack: Array.from({ length: r.range(3, 7) }, () => `at ${r.pick(['handle', 'process', 'fetchJson', 'withRetry', 'runQuery', 'dispatch'])} (/srv/app/src/${r.pick(SERVICES)}/${r.pick(['handler', 'client', 'db', 'queue'])}.js:${r.range(10, 400)}:${r.range(5, 60)})`),
          retriable: r.next() < 0.6,
        };
      }
    } else if (kind === 'db') {
      const n = r.range(1, 4);
      ev.message = `transaction committed (${n} statements)`;
      ev.db = {
        system: 'postgresql',
        pool: { active: r.range(1, 20), idle: r.range(0, 10), waiting: r.next() < 0.9 ? 0 : r.range(1, 5) },
        statements: Array.from({ length: n }, () => ({ table: r.pick(DB_TABLES), op: r.pick(['select', 'insert', 'update']), rows: r.range(0, 200), ms: Math.round(r.logNormal(2, 1) * 100) / 100 })),
      };
      ev.duration_ms = durationMs;
    } else if (kind === 'job') {
      const job = r.pick(['send-receipt', 'reindex-product', 'expire-sessions', 'sync-inventory', 'charge-subscription']);
      ev.message = `job ${job} finished`;
      ev.job = { name: job, id: r.hex(12), attempt: r.next() < 0.9 ? 1 : r.range(2, 5), queue: r.pick(['default', 'critical', 'low']), items: r.range(1, 500) };
      ev.user = { id: user.id, plan: user.plan };
      ev.duration_ms = Math.round(durationMs * 20) / 10;
    } else {
      const hit = r.next() < 0.85;
      ev.message = hit ? 'cache hit' : 'cache miss; loaded from origin';
      ev.cache = { name: r.pick(['product-by-id', 'user-session', 'price-list', 'recommendations']), hit, key: `${r.pick(['p', 'u', 's'])}:${r.range(1, 99999)}`, ttl_s: r.pick([30, 60, 300, 3600]) };
      ev.duration_ms = hit ? Math.round(r.logNormal(0.4, 0.5) * 1000) / 1000 : durationMs;
    }
    ev.labels = r.next() < 0.5 ? ['web', service] : [service, r.pick(REGIONS), r.pick(['canary', 'stable'])];
    return { rawstring: JSON.stringify(ev), attributes: ev, timestamp: ms };
  };
}

// ---------------------------------------------------------------------------------------------
// kv lines
// ---------------------------------------------------------------------------------------------

/**
 * A value as it appears after `key=`: bare if it has no space, quote or `=`, else double-quoted.
 * @param {string} v
 */
function kvValue(v) {
  return /^[^\s"=]+$/.test(v) ? v : `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * @param {number} seed
 * @returns {() => BenchEvent}
 */
function kvGenerator(seed) {
  const r = new Rng(seed);
  const hosts = Array.from({ length: 16 }, (_, i) => `worker-${pad(i + 1)}.${r.pick(REGIONS)}.internal`);
  let t = EPOCH_START_MS;
  return () => {
    t += r.exp(2.5);
    const ms = Math.floor(t);
    const level = r.weighted(LEVELS).toLowerCase();
    const service = r.pick(SERVICES);
    /** @type {[string, string][]} */
    const pairs = [
      ['level', level],
      ['service', service],
      ['host', r.pick(hosts)],
      ['pid', String(r.range(1000, 65000))],
    ];
    const kind = r.weighted(/** @type {const} */ ([
      ['payment', 30],
      ['login', 25],
      ['queue', 25],
      ['gc', 10],
      ['slow', 10],
    ]));
    switch (kind) {
      case 'payment': {
        const ok = r.next() < 0.93;
        pairs.push(['msg', ok ? 'charge succeeded' : 'charge declined by issuer'], ['user_id', String(r.range(10000, 99999))], ['amount', (r.logNormal(40, 0.9) + 0.99).toFixed(2)], ['currency', r.pick(['EUR', 'USD', 'GBP', 'DKK'])], ['card_brand', r.pick(['visa', 'mastercard', 'amex'])], ['status', ok ? 'ok' : 'declined']);
        if (!ok) pairs.push(['decline_code', r.pick(['insufficient_funds', 'do_not_honor', 'expired_card'])]);
        break;
      }
      case 'login': {
        const ok = r.next() < 0.9;
        pairs.push(['msg', ok ? 'user logged in' : 'login failed'], ['user', `${r.pick(FIRST_NAMES)}${r.range(1, 999)}`], ['src_ip', ipv4(r)], ['method', r.pick(['password', 'sso', 'webauthn'])], ['mfa', String(r.next() < 0.6)]);
        if (!ok) pairs.push(['reason', r.pick(['bad password', 'account locked', 'mfa timeout'])]);
        break;
      }
      case 'queue':
        pairs.push(['msg', 'batch processed'], ['queue', r.pick(['orders', 'emails', 'webhooks', 'exports'])], ['batch_size', String(r.range(1, 500))], ['lag_ms', String(Math.round(r.logNormal(40, 1.2)))], ['partition', String(r.int(24))], ['offset', String(r.range(1_000_000, 9_999_999))]);
        break;
      case 'gc':
        pairs.push(['msg', 'gc pause'], ['gc', r.pick(['scavenge', 'mark-sweep-compact'])], ['pause_ms', (r.logNormal(3, 0.8)).toFixed(2)], ['heap_used_mb', String(r.range(80, 900))], ['heap_total_mb', String(r.range(900, 1500))]);
        break;
      default:
        pairs.push(['msg', 'slow query'], ['query', `SELECT * FROM ${r.pick(DB_TABLES)} WHERE id = $1`], ['rows', String(r.range(0, 5000))]);
        break;
    }
    pairs.push(['duration_ms', String(Math.round(r.logNormal(15, 1.1)))], ['trace_id', r.hex(32)]);
    const rawstring = `${new Date(ms).toISOString()} ${pairs.map(([k, v]) => `${k}=${kvValue(v)}`).join(' ')}`;
    /** @type {Record<string, unknown>} */
    const attributes = {};
    for (const [k, v] of pairs) attributes[k] = v;
    return { rawstring, attributes, timestamp: ms };
  };
}

/**
 * The event generator of a dataset for a seed: deterministic, endless.
 * @param {DatasetName} name
 * @param {number} seed
 * @returns {() => BenchEvent}
 */
export function createDataset(name, seed) {
  const s = (seed ^ fnv1a(name)) >>> 0;
  switch (name) {
    case 'accesslog':
      return accessLogGenerator(s);
    case 'json':
      return jsonEventGenerator(s);
    case 'kv':
      return kvGenerator(s);
    default:
      throw new Error(`unknown dataset "${String(name)}"; use one of ${DATASET_NAMES.join(', ')}`);
  }
}
