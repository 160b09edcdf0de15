/** The page and its parameters live in the URL's hash (`#/search?repo=web&q=...`): shareable, never sent to the server. */
import { useEffect, useState } from 'react';

export interface Route {
  page: string;
  params: URLSearchParams;
}

/** The defined, non-empty parameters, in their order. */
export function searchParams(params: Record<string, string | undefined>): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, v);
  return p;
}

export function currentRoute(): Route {
  const h = location.hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  return { page: (q < 0 ? h : h.slice(0, q)) || 'search', params: new URLSearchParams(q < 0 ? '' : h.slice(q + 1)) };
}

export function routeHref(page: string, params: Record<string, string | undefined> = {}): string {
  const qs = searchParams(params).toString();
  return `#/${page}${qs === '' ? '' : `?${qs}`}`;
}

/** Changes the URL; `replace` keeps the history entry (a re-run of the same search). */
export function setRoute(page: string, params: Record<string, string | undefined>, replace = false): void {
  const href = routeHref(page, params);
  if (location.hash === href) return;
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event('logsvc:route'));
}

export function useRoute(): Route {
  const [route, set] = useState(currentRoute);
  useEffect(() => {
    const on = (): void => set(currentRoute());
    window.addEventListener('hashchange', on);
    window.addEventListener('popstate', on);
    window.addEventListener('logsvc:route', on);
    return () => {
      window.removeEventListener('hashchange', on);
      window.removeEventListener('popstate', on);
      window.removeEventListener('logsvc:route', on);
    };
  }, []);
  return route;
}
