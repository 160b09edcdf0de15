/** The UI's shell: sign-in with an API token (sessionStorage), the repository picker, navigation, pages. */
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { gql, session } from './api';
import { routeHref, setRoute, useRoute } from './route';
import { SearchPage } from './pages/search';
import { ParsersPage } from './pages/parsers';
import { AlertsPage } from './pages/alerts';
import { FilesPage } from './pages/files';
import { ClusterPage } from './pages/cluster';
import './style.css';

interface Viewer {
  username: string;
  isRoot: boolean;
}

function SignIn({ onSignedIn }: { onSignedIn: (v: Viewer) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: { preventDefault(): void }): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    session.set(token.trim());
    try {
      const d = await gql<{ viewer: Viewer }>('{ viewer { username isRoot } }');
      onSignedIn(d.viewer);
    } catch (err) {
      session.clear();
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="signin">
      <form onSubmit={(e) => void submit(e)}>
        <h1>logsvc</h1>
        <p className="muted">Sign in with your API token. It is kept in this tab's session storage only.</p>
        <input type="password" autoComplete="off" placeholder="API token" value={token} onChange={(e) => setToken(e.currentTarget.value)} data-testid="token" autoFocus />
        <button type="submit" disabled={busy || token.trim() === ''} data-testid="sign-in">
          Sign in
        </button>
        {error !== null ? <div className="error" data-testid="sign-in-error">{error}</div> : null}
      </form>
    </div>
  );
}

const PAGES = [
  ['search', 'Search'],
  ['parsers', 'Parsers'],
  ['alerts', 'Alerts'],
  ['files', 'Files'],
  ['cluster', 'Cluster'],
] as const;

function App() {
  const route = useRoute();
  const [viewer, setViewer] = useState<Viewer | null>(null);
  const [checked, setChecked] = useState(false);
  const [repos, setRepos] = useState<string[]>([]);
  useEffect(() => {
    if (session.token() === null) {
      setChecked(true);
      return;
    }
    gql<{ viewer: Viewer }>('{ viewer { username isRoot } }').then(
      (d) => {
        setViewer(d.viewer);
        setChecked(true);
      },
      () => {
        session.clear();
        setChecked(true);
      },
    );
  }, []);
  useEffect(() => {
    if (viewer === null) return;
    gql<{ searchDomains: { name: string }[] }>('{ searchDomains { name } }').then(
      (d) => setRepos(d.searchDomains.map((r) => r.name).sort()),
      () => setRepos([]),
    );
  }, [viewer]);
  if (!checked) return null;
  if (viewer === null) return <SignIn onSignedIn={setViewer} />;

  const repo = route.params.get('repo') ?? repos.find((r) => r !== 'humio') ?? repos[0] ?? '';
  const pick = (name: string): void => setRoute(route.page, { repo: name });
  return (
    <div className="app">
      <header>
        <span className="brand">logsvc</span>
        <select value={repo} onChange={(e) => pick(e.currentTarget.value)} data-testid="repo-picker" aria-label="Repository">
          {repos.length === 0 ? <option value="">(no repositories)</option> : null}
          {repos.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <nav>
          {PAGES.map(([page, label]) => (
            <a key={page} href={routeHref(page, { repo })} className={route.page === page ? 'active' : ''} data-testid={`nav-${page}`}>
              {label}
            </a>
          ))}
        </nav>
        <span className="user">
          {viewer.username}
          {viewer.isRoot ? ' (root)' : ''}
          <button
            className="link"
            onClick={() => {
              session.clear();
              setViewer(null);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main>
        {repo === '' && route.page !== 'cluster' ? <div className="empty">No repository to show: create one first (GraphQL createRepository or humioctl).</div> : null}
        {repo !== '' && route.page === 'search' ? <SearchPage key={repo} route={route} repo={repo} /> : null}
        {repo !== '' && route.page === 'parsers' ? <ParsersPage key={repo} repo={repo} /> : null}
        {repo !== '' && route.page === 'alerts' ? <AlertsPage key={repo} repo={repo} /> : null}
        {repo !== '' && route.page === 'files' ? <FilesPage key={repo} repo={repo} /> : null}
        {route.page === 'cluster' ? <ClusterPage /> : null}
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
