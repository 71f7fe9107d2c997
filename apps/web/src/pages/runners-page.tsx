import type { Runner } from "@corral/shared";
import { ErrorState, Loading } from "../components/states.js";
import { useNow } from "../hooks/use-now.js";
import { useRunners } from "../hooks/use-runners.js";
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

/** The `corral runner` processes that announced themselves, newest first. */
export function RunnersPage() {
  const runners = useRunners();
  const now = useNow();
  return (
    <>
      <div className="page-head">
        <h1>Runners</h1>
      </div>
      {runners.isError ? (
        <ErrorState error={runners.error} what="runners" onRetry={() => void runners.refetch()} />
      ) : !runners.data ? (
        <Loading what="runners" />
      ) : runners.data.length === 0 ? (
        <div className="empty">
          <strong>No runner has announced itself</strong>
          <span className="muted small">
            Start one on a machine with the CLIs: CORRAL_DATABASE_URL=… CORRAL_RUNNER_LABELS=gpu pnpm runner, and give agents that runner label.
          </span>
        </div>
      ) : (
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
                      <div className="mono small muted">{r.id}</div>
                    </td>
                    <td data-label="Labels" className="mono small">
                      {r.labels.join(", ")}
                    </td>
                    <td data-label="State">{STATE_TEXT[r.state]}</td>
                    <td data-label="Jobs" className="num">
                      {r.activeJobs}
                    </td>
                    <td data-label="Last heartbeat" title={formatFullTime(r.heartbeatAt)}>
                      {secondsAgo(r.heartbeatAt, now)}
                    </td>
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
      )}
    </>
  );
}
