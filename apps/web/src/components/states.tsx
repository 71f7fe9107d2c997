import type { ReactNode } from "react";
import { ApiRequestError } from "../api/client.js";

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <strong>{title}</strong>
      {children}
    </div>
  );
}

/** An error with what to do about it; a missing token gets the one fix that works. */
export function ErrorState({ error, what, onRetry }: { error: unknown; what: string; onRetry?: () => void }) {
  const unauthorized = error instanceof ApiRequestError && error.unauthorized;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="alert" role="alert">
      <strong>Could not load {what}.</strong>
      {unauthorized ? (
        <p>
          This browser is not signed in (or its session expired or was signed out). Open the URL Corral printed when it started (it ends in{" "}
          <code>?token=…</code>) to sign in again.
        </p>
      ) : (
        <p>
          {message}
          {error instanceof TypeError ? " — is the Corral server running?" : ""}
        </p>
      )}
      {onRetry && (
        <p>
          <button type="button" className="small" onClick={onRetry}>
            Try again
          </button>
        </p>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}
