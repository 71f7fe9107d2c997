import { useCallback, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

/*
 * A few lines of history routing instead of a router library: the panel has eight flat pages,
 * and the server already answers every non-API path with index.html.
 */
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener("popstate", listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("popstate", listener);
  };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  for (const listener of listeners) listener();
}

const snapshot = () => window.location.pathname + window.location.search;

export function useLocation(): URL {
  const href = useSyncExternalStore(subscribe, snapshot, () => "/");
  return new URL(href, "http://panel");
}

/** `/jobs/:id` against `/jobs/abc` gives `{ id: "abc" }`; null when it does not match. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const have = pathname.split("/").filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const h = have[i] as string;
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return null;
  }
  return params;
}

/** Query-string state, so filters survive reloads and can be shared as links. */
export function useSearchParams(): [URLSearchParams, (next: Record<string, string | undefined>, options?: { replace?: boolean }) => void] {
  const location = useLocation();
  const params = location.searchParams;
  const set = useCallback((next: Record<string, string | undefined>, options: { replace?: boolean } = { replace: true }) => {
    const merged = new URLSearchParams(window.location.search);
    for (const [key, value] of Object.entries(next)) {
      if (value === undefined || value === "") merged.delete(key);
      else merged.set(key, value);
    }
    const query = merged.toString();
    navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, options);
  }, []);
  return [params, set];
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

export function Link({ to, onClick, ...props }: LinkProps) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={handle} {...props} />;
}
