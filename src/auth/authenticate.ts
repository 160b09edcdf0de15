/**
 * Turning credentials into a Principal: `Authorization: Bearer <token>` (scheme case-insensitive),
 * HTTP basic `<user>:<token>` (the product's health examples), and `Splunk <token>` for HEC clients.
 * Every failure is an E_AUTH_* error whose message never contains the presented token.
 */
import { LogsvcError } from '../lib/errors.js';
import type { GlobalState } from '../global/index.js';
import type { Principal } from './principal.js';
import { digestsEqual, tokenDigest } from './tokens.js';

export interface Credentials {
  token: string;
  /** Username given with HTTP basic auth, if that scheme was used. */
  username?: string;
}

const MAX_TOKEN_CHARS = 512;

export function parseAuthorization(header: string | undefined): Credentials | null {
  if (header === undefined || header.trim() === '') return null;
  const m = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(header);
  if (m === null) throw new LogsvcError('E_AUTH_INVALID', 'Authorization header is malformed; expected "Bearer <token>"');
  const scheme = m[1]!.toLowerCase();
  const value = m[2]!;
  if (value.length > MAX_TOKEN_CHARS) throw new LogsvcError('E_AUTH_INVALID', 'Authorization credentials are too long');
  if (scheme === 'bearer' || scheme === 'splunk') return { token: value };
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new LogsvcError('E_AUTH_INVALID', 'Basic credentials must be "<user>:<token>"');
    return { username: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
  }
  throw new LogsvcError('E_AUTH_INVALID', `Authorization scheme "${m[1]}" is not supported; use Bearer`);
}

/**
 * The SHA-256 digests of recently presented tokens, by token: a client sends the same token with
 * every request, and each request was hashed (~1.2 us warm, and the hash object's allocations) before
 * and after its body was read. The digest is a function of the token alone; every check still looks
 * it up in the state as it is then, so a token revoked or rotated is refused on its next request,
 * cached or not. Bounded (the oldest token out first), so a stream of wrong tokens costs a hash each
 * and holds at most TOKEN_DIGESTS entries of at most MAX_TOKEN_CHARS each.
 */
const TOKEN_DIGESTS = 1024;
const digests = new Map<string, string>();

function digestOf(creds: Credentials): string {
  let d = digests.get(creds.token);
  if (d === undefined) {
    d = tokenDigest(creds.token);
    if (creds.token.length > MAX_TOKEN_CHARS) return d;
    if (digests.size >= TOKEN_DIGESTS) digests.delete(digests.keys().next().value!);
    digests.set(creds.token, d);
  }
  return d;
}

export class Authenticator {
  constructor(
    private readonly state: () => GlobalState,
    private readonly localAdminDigest: () => string,
  ) {}

  /** An API principal (user or local admin); ingest tokens are refused here. */
  apiPrincipal(creds: Credentials | null): Principal {
    if (creds === null) throw new LogsvcError('E_AUTH_MISSING', 'authentication required: send "Authorization: Bearer <API token>"');
    const digest = digestOf(creds);
    if (digestsEqual(digest, this.localAdminDigest())) return { kind: 'local-admin', isRoot: true };
    const state = this.state();
    const userId = state.usersByTokenDigest.get(digest);
    const user = userId === undefined ? undefined : state.users.get(userId);
    if (user !== undefined && user.apiTokenDigest !== null && digestsEqual(digest, user.apiTokenDigest)) {
      if (creds.username !== undefined && creds.username !== user.username) {
        throw new LogsvcError('E_AUTH_INVALID', 'the user name does not match the API token');
      }
      return { kind: 'user', userId: user.id, username: user.username, isRoot: user.isRoot };
    }
    if (state.ingestTokensByDigest.has(digest)) {
      throw new LogsvcError('E_FORBIDDEN', 'an ingest token can only send data; use an API token here');
    }
    throw new LogsvcError('E_AUTH_INVALID', 'the API token is not valid');
  }

  /**
   * An ingest principal: an ingest token of an existing repository. With HTTP basic auth the token
   * may be the password or the user name (Beats and other Elastic clients put it in either).
   */
  ingestPrincipal(creds: Credentials | null): Principal & { kind: 'ingest' } {
    if (creds === null) throw new LogsvcError('E_AUTH_MISSING', 'authentication required: send "Authorization: Bearer <ingest token>"');
    if (creds.username !== undefined) {
      try {
        return this.ingestPrincipal({ token: creds.token });
      } catch {
        return this.ingestPrincipal({ token: creds.username });
      }
    }
    const digest = digestOf(creds);
    const state = this.state();
    const ref = state.ingestTokensByDigest.get(digest);
    const token = ref === undefined ? undefined : state.repositories.get(ref.repositoryId)?.ingestTokens.get(ref.name);
    if (ref === undefined || token === undefined || !digestsEqual(digest, token.digest)) {
      throw new LogsvcError('E_AUTH_INVALID', 'the ingest token is not valid');
    }
    return { kind: 'ingest', repositoryId: ref.repositoryId, tokenName: ref.name };
  }
}
