import { useState, type FormEvent } from "react";
import type { ApiRequestError } from "../api/client.js";
import { useDocumentTitle } from "../hooks/use-document-title.js";

/** Why the server turned this browser away, in its words: a token in the address it did not accept, a session that ended, or none at all. */
function reason(error: ApiRequestError): string {
  if (new URLSearchParams(window.location.search).has("token")) {
    return "This browser is not signed in: the token in this address is not this server's (it may be another Corral's, or cut short when copied).";
  }
  if (/session has expired or was signed out/.test(error.message)) {
    return "This browser is not signed in: its session ended (it expired, or it was signed out on the Connect page).";
  }
  return "This browser is not signed in.";
}

/**
 * What a browser the server turns away sees, in place of the panel: why, and the two ways in (the
 * URL Corral printed, or its token pasted here). No navigation or live status: nothing behind it
 * would load. Signing in is the server's `?token=` exchange, which answers with a session and the
 * same address without the token.
 */
export function SignInPage({ error }: { error: ApiRequestError }) {
  useDocumentTitle("Sign in · Corral");
  const [token, setToken] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const value = token.trim();
    if (!value) return;
    window.location.assign(`${window.location.pathname}?token=${encodeURIComponent(value)}`);
  };
  return (
    <main id="main" className="sign-in stack">
      <h1>
        <span aria-hidden="true">◎</span> Sign in to Corral
      </h1>
      <div className="alert warn" role="alert">
        <strong>{reason(error)}</strong>
      </div>
      <p>
        Open the address Corral printed when it started: it ends in <code>?token=…</code>. Or paste the token here: it is in the file{" "}
        <code>token</code> of Corral's data directory (<code>~/.local/share/corral/token</code> unless <code>CORRAL_DATA_DIR</code> says otherwise),
        or <code>CORRAL_TOKEN</code> if you set one.
      </p>
      <form className="row" onSubmit={submit}>
        <label htmlFor="sign-in-token">Token</label>
        <input
          id="sign-in-token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          className="grow"
        />
        <button type="submit" className="primary" disabled={!token.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}
