import { LOCAL_RUNNER, type Runner } from "@corral/shared";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { useNow } from "../hooks/use-now.js";
import { useMultiMachine, useRunners } from "../hooks/use-runners.js";
import { formatAgo, formatFullTime } from "../lib/format/format.js";

const STATE_TEXT: Record<Runner["state"], string> = {
  running: "running",
  silent: "silent (its running jobs were marked lost)",
  stopped: "stopped",
};

/** Heartbeats come every 2 s: their age in seconds says whether one is late. */
function secondsAgo(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 120 ? `${s} s ago` : formatAgo(at, now);
}

/** The server's own runner, `local`, then the `corral runner` processes that announced themselves, newest first. */
export function RunnersPage() {
  const runners = useRunners();
  const multiMachine = useMultiMachine();
  const now = useNow();
  return (
    <>
      <div className="page-head">
        <h1>Runners</h1>
      </div>
      {multiMachine === false ? (
        <EmptyState title="This server runs every job itself">
          <span>
            Other machines can run jobs once the registry is in PostgreSQL (<code>CORRAL_DATABASE_URL</code>) and each starts{" "}
            <code>corral runner</code>.
          </span>
        </EmptyState>
      ) : runners.isError ? (
        <ErrorState error={runners.error} what="runners" onRetry={() => void runners.refetch()} />
      ) : !runners.data ? (
        <Loading what="runners" />
      ) : (
        <>
          <section className="card" aria-label="Runners">
            <div style={{ overflowX: "auto" }}>
              <table className="cards">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Labels</th>
                    <th>State</th>
                    <th className="num">Jobs</th>
                    <th>Last heartbeat</th>
                    <th>Started</th>
                    <th>Host</th>
                  </tr>
                </thead>
                <tbody>
                  {runners.data.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <strong>{r.name}</strong>
                        {r.id === LOCAL_RUNNER ? <div className="small muted">this server</div> : <div className="mono small muted">{r.id}</div>}
                      </td>
                      <td data-label="Labels" className={r.id === LOCAL_RUNNER ? "small muted" : "mono small"}>
                        {r.id === LOCAL_RUNNER ? "agents without a runner label" : r.labels.join(", ")}
                      </td>
                      <td data-label="State">{STATE_TEXT[r.state]}</td>
                      <td data-label="Jobs" className="num">
                        {r.activeJobs}
                      </td>
                      {r.id === LOCAL_RUNNER ? (
                        <td data-label="Last heartbeat" className="muted">
                          answering now
                        </td>
                      ) : (
                        <td data-label="Last heartbeat" title={formatFullTime(r.heartbeatAt)}>
                          {secondsAgo(r.heartbeatAt, now)}
                        </td>
                      )}
                      <td data-label="Started" title={formatFullTime(r.startedAt)}>
                        {formatAgo(r.startedAt, now)}
                      </td>
                      <td data-label="Host" className="mono small">
                        {r.hostname} · {r.version}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          {runners.data.every((r) => r.id === LOCAL_RUNNER) && (
            <p className="muted small">
              Only this server runs jobs. To run them on other machines, keep the registry in PostgreSQL (CORRAL_DATABASE_URL), start a runner where
              the CLIs are (CORRAL_DATABASE_URL=… CORRAL_RUNNER_LABELS=gpu pnpm runner) and give agents that runner label: see docs/runners.md.
            </p>
          )}
        </>
      )}
    </>
  );
}
