import { lazy, Suspense, useEffect, useRef, type ReactNode } from "react";
import { ApiRequestError } from "./api/client.js";
import { Loading } from "./components/states.js";
import { useActiveJobs } from "./hooks/use-jobs.js";
import { useTheme, type ThemeChoice } from "./hooks/use-theme.js";
import { useLiveStatus } from "./hooks/use-live-status.js";
import { useMultiMachine } from "./hooks/use-runners.js";
import { Link, matchPath, useLocation } from "./router.js";
import { AgentsPage } from "./pages/agents-page.js";
import { ApiPage } from "./pages/api-page.js";
import { ComparePage } from "./pages/compare-page.js";
import { ConnectPage } from "./pages/connect-page.js";
import { JobDetailPage } from "./pages/job-detail-page.js";
import { JobsPage } from "./pages/jobs-page.js";
import { LaunchPage } from "./pages/launch-page.js";
import { OllamaPage } from "./pages/ollama-page.js";
import { RunnersPage } from "./pages/runners-page.js";
import { SignInPage } from "./pages/sign-in-page.js";

// The chart and highlighting libraries load only with the pages that use them; Conversations loads
// with its page too, which keeps the first load under Vite's 500 kB chunk warning.
const CostsPage = lazy(() => import("./pages/costs-page.js").then((m) => ({ default: m.CostsPage })));
const FilesPage = lazy(() => import("./pages/files-page.js").then((m) => ({ default: m.FilesPage })));
const ConversationsPage = lazy(() => import("./pages/conversations-page.js").then((m) => ({ default: m.ConversationsPage })));

const navItems = [
  { to: "/", label: "Jobs", match: (p: string) => p === "/" || p.startsWith("/jobs") },
  { to: "/launch", label: "Launch" },
  { to: "/conversations", label: "Conversations" },
  { to: "/files", label: "Files" },
  { to: "/costs", label: "Costs" },
  { to: "/ollama", label: "Ollama" },
  { to: "/agents", label: "Agents" },
  { to: "/runners", label: "Runners" },
  { to: "/connect", label: "Connect" },
  { to: "/reference", label: "API" },
];

function route(pathname: string): ReactNode {
  if (pathname === "/" || pathname === "/jobs") return <JobsPage />;
  const job = matchPath("/jobs/:id", pathname);
  if (job?.id) return <JobDetailPage key={job.id} id={job.id} />;
  switch (pathname) {
    case "/launch":
      return <LaunchPage />;
    case "/compare":
      return <ComparePage />;
    case "/conversations":
      return <ConversationsPage />;
    case "/files":
      return <FilesPage />;
    case "/costs":
      return <CostsPage />;
    case "/ollama":
      return <OllamaPage />;
    case "/agents":
      return <AgentsPage />;
    case "/runners":
      return <RunnersPage />;
    case "/connect":
      return <ConnectPage />;
    case "/reference":
      return <ApiPage />;
    default:
      return (
        <div className="empty">
          <strong>No page at {pathname}</strong>
          <Link to="/">Go to the jobs</Link>
        </div>
      );
  }
}

/** On a phone the nav is a bar that scrolls sideways: keep the current page's item in sight. */
function useCurrentItemInView(pathname: string) {
  const nav = useRef<HTMLElement>(null);
  useEffect(() => {
    const bar = nav.current;
    const item = bar?.querySelector('[aria-current="page"]');
    if (!bar || !item || bar.scrollWidth <= bar.clientWidth) return;
    // As little as brings it whole into sight, with room to spare to show a neighbour is there.
    const room = 24;
    const b = bar.getBoundingClientRect();
    const i = item.getBoundingClientRect();
    if (i.left < b.left + room) bar.scrollLeft -= b.left + room - i.left;
    else if (i.right > b.right - room) bar.scrollLeft += i.right - (b.right - room);
  }, [pathname]);
  return nav;
}

export function App() {
  const { pathname } = useLocation();
  const nav = useCurrentItemInView(pathname);
  const [theme, setTheme] = useTheme();
  const live = useLiveStatus();
  const active = useActiveJobs();
  const running = active.data?.jobs.filter((j) => j.status === "running").length ?? 0;
  const multiMachine = useMultiMachine();
  // Turned away by the server (no session, an ended one, a wrong token): the sign-in page alone, not
  // a panel whose every part would say the same error.
  if (active.error instanceof ApiRequestError && active.error.unauthorized) return <SignInPage error={active.error} />;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="sidebar">
        <div className="brand">
          <span aria-hidden="true">◎</span> <span className="hide-narrow">Corral</span>
        </div>
        <nav className="nav" aria-label="Main" ref={nav}>
          {navItems
            .filter((item) => item.to !== "/runners" || multiMachine !== false)
            .map((item) => {
              const current = item.match ? item.match(pathname) : pathname === item.to;
              return (
                <Link key={item.to} to={item.to} aria-current={current ? "page" : undefined}>
                  <span>{item.label}</span>
                  {item.to === "/" && running > 0 && (
                    <span className="badge info" role="status" aria-label={`${running} running`}>
                      {running}
                    </span>
                  )}
                </Link>
              );
            })}
        </nav>
        <div className="sidebar-foot">
          <label className="row small" style={{ fontWeight: 400 }}>
            <span className="hide-narrow">Theme</span>
            <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)} aria-label="Colour theme">
              <option value="system">System</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <span className="row small" title={live ? "Live updates over WebSocket" : "Refreshing every few seconds"}>
            <span className="dot" style={{ color: live ? "var(--ok)" : "var(--muted)" }} aria-hidden="true" />
            {live ? "live" : "polling"}
          </span>
        </div>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        <Suspense fallback={<Loading what="the page" />}>{route(pathname)}</Suspense>
      </main>
    </div>
  );
}
