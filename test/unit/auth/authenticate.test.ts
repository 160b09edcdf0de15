/**
 * Authenticator with its digests of recently presented tokens kept (authenticate.ts digestOf): a
 * token seen before is refused once it is rotated or revoked, its successor accepted at once, and
 * more distinct tokens than the cache holds are each still judged by the state as it is then.
 */
import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { Authenticator } from '../../../src/auth/authenticate.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import type { GlobalState } from '../../../src/global/index.js';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const token = (): string => randomBytes(32).toString('base64url');

interface FakeState {
  usersByTokenDigest: Map<string, string>;
  users: Map<string, { id: string; username: string; isRoot: boolean; apiTokenDigest: string | null }>;
  ingestTokensByDigest: Map<string, { repositoryId: string; name: string }>;
  repositories: Map<string, { ingestTokens: Map<string, { digest: string }> }>;
}

function fixture() {
  const st: FakeState = { usersByTokenDigest: new Map(), users: new Map(), ingestTokensByDigest: new Map(), repositories: new Map([['r1', { ingestTokens: new Map() }]]) };
  const admin = token();
  const auth = new Authenticator(() => st as unknown as GlobalState, () => sha(admin));
  const setUserToken = (id: string, tok: string | null): void => {
    const prev = st.users.get(id)?.apiTokenDigest;
    if (prev !== undefined && prev !== null) st.usersByTokenDigest.delete(prev);
    st.users.set(id, { id, username: id, isRoot: false, apiTokenDigest: tok === null ? null : sha(tok) });
    if (tok !== null) st.usersByTokenDigest.set(sha(tok), id);
  };
  const setIngestToken = (name: string, tok: string | null): void => {
    const repo = st.repositories.get('r1')!;
    const prev = repo.ingestTokens.get(name);
    if (prev !== undefined) st.ingestTokensByDigest.delete(prev.digest);
    if (tok === null) repo.ingestTokens.delete(name);
    else {
      repo.ingestTokens.set(name, { digest: sha(tok) });
      st.ingestTokensByDigest.set(sha(tok), { repositoryId: 'r1', name });
    }
  };
  return { auth, admin, setUserToken, setIngestToken };
}

const refused = (t: Test, f: () => unknown, code: string, what: string): void => {
  try {
    f();
    t.fail(`${what}: accepted`);
  } catch (err) {
    t.ok(err instanceof LogsvcError && err.code === code, `${what}: ${(err as LogsvcError).code}`);
  }
};

t.test('a rotated API token is refused on its next request, its successor accepted', async (t) => {
  const { auth, admin, setUserToken } = fixture();
  const a = token();
  setUserToken('u1', a);
  for (let i = 0; i < 3; i++) t.same(auth.apiPrincipal({ token: a }), { kind: 'user', userId: 'u1', username: 'u1', isRoot: false });
  t.same(auth.apiPrincipal({ token: admin }), { kind: 'local-admin', isRoot: true });
  const b = token();
  setUserToken('u1', b);
  refused(t, () => auth.apiPrincipal({ token: a }), 'E_AUTH_INVALID', 'old token after rotation');
  t.same(auth.apiPrincipal({ token: b }), { kind: 'user', userId: 'u1', username: 'u1', isRoot: false });
  setUserToken('u1', null);
  refused(t, () => auth.apiPrincipal({ token: b }), 'E_AUTH_INVALID', 'token after revocation');
  refused(t, () => auth.apiPrincipal({ token: b, username: 'u1' }), 'E_AUTH_INVALID', 'basic credentials after revocation');
});

t.test('an ingest token removed or rotated is refused at once', async (t) => {
  const { auth, setIngestToken } = fixture();
  const a = token();
  setIngestToken('default', a);
  t.same(auth.ingestPrincipal({ token: a }), { kind: 'ingest', repositoryId: 'r1', tokenName: 'default' });
  refused(t, () => auth.apiPrincipal({ token: a }), 'E_FORBIDDEN', 'ingest token on the API');
  const b = token();
  setIngestToken('default', b);
  refused(t, () => auth.ingestPrincipal({ token: a }), 'E_AUTH_INVALID', 'rotated ingest token');
  t.same(auth.ingestPrincipal({ token: 'x', username: b }), { kind: 'ingest', repositoryId: 'r1', tokenName: 'default' });
  setIngestToken('default', null);
  refused(t, () => auth.ingestPrincipal({ token: b }), 'E_AUTH_INVALID', 'removed ingest token');
});

t.test('more tokens than the cache holds: each judged by the state as it is then', async (t) => {
  const { auth, setUserToken } = fixture();
  const n = 3000;
  const toks = Array.from({ length: n }, token);
  toks.forEach((tok, i) => setUserToken(`u${i}`, tok));
  let wrong = 0;
  // Twice over, the second pass after every other user's token was rotated: half refused, half not.
  for (const tok of toks) if (auth.apiPrincipal({ token: tok }).kind !== 'user') wrong++;
  for (let i = 0; i < n; i += 2) setUserToken(`u${i}`, token());
  for (let i = 0; i < n; i++) {
    let ok = true;
    try {
      auth.apiPrincipal({ token: toks[i]! });
    } catch {
      ok = false;
    }
    if (ok !== (i % 2 === 1)) wrong++;
  }
  t.equal(wrong, 0, 'every answer as the state says');
  refused(t, () => auth.apiPrincipal({ token: 'x'.repeat(600) }), 'E_AUTH_INVALID', 'a long unknown token');
});
