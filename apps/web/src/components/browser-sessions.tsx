import { useSessionMutations, useSessions } from "../hooks/use-sessions.js";
import { useNow } from "../hooks/use-now.js";
import { formatAgo, formatTime } from "../lib/format/format.js";
import { describeUserAgent } from "../lib/format/user-agent.js";
import { ErrorState, Loading } from "./states.js";

/** Browsers signed in to this panel, with sign-out for one and for all. */
export function BrowserSessions() {
  const sessions = useSessions();
  const { signOut, signOutEverywhere } = useSessionMutations();
  const now = useNow(30_000);
  if (sessions.isError) return <ErrorState error={sessions.error} what="signed-in browsers" onRetry={() => void sessions.refetch()} />;
  if (sessions.isPending) return <Loading what="signed-in browsers" />;
  const failed = signOut.error ?? signOutEverywhere.error;
  return (
    <div className="stack">
      <table aria-label="Signed-in browsers" className="cards">
        <thead>
          <tr>
            <th>Browser</th>
            <th>Signed in</th>
            <th>Last seen</th>
            <th>Expires</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {sessions.data.map((s) => (
            <tr key={s.id}>
              <td>
                {/* The name a person knows; the string it was read from, as sent, in the tooltip. */}
                <span title={s.userAgent || undefined}>{describeUserAgent(s.userAgent)}</span>
                {s.current && (
                  <>
                    {" "}
                    <span className="badge">this browser</span>
                  </>
                )}
              </td>
              <td data-label="Signed in">{formatTime(s.createdAt)}</td>
              <td data-label="Last seen">{formatAgo(s.lastSeenAt, now)}</td>
              <td data-label="Expires">{formatTime(s.expiresAt)}</td>
              <td>
                <button type="button" className="small" disabled={signOut.isPending} onClick={() => signOut.mutate(s.id)}>
                  Sign out{s.current ? " here" : ""}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {failed && (
        <p className="alert" role="alert">
          Could not sign out: {failed.message}
        </p>
      )}
      <p>
        <button
          type="button"
          className="danger"
          disabled={signOutEverywhere.isPending}
          onClick={() => {
            if (window.confirm("Sign out every browser, this one included? Each must open the printed URL again.")) signOutEverywhere.mutate();
          }}
        >
          Sign out everywhere
        </button>
      </p>
    </div>
  );
}
