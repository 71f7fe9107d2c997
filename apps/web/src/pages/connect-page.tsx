import { useState } from "react";
import { useConnectInfo } from "../hooks/use-connect.js";
import { BrowserSessions } from "../components/browser-sessions.js";
import { CopyBlock } from "../components/copy-button.js";
import { ErrorState, Loading } from "../components/states.js";
import { maskedToken, mcpAddCommand, mcpUrlWith, permissionsSnippet } from "../lib/domain/connect-snippets.js";
import { Link } from "../router.js";

export function ConnectPage() {
  const info = useConnectInfo();
  const [revealed, setRevealed] = useState(false);
  const [toolsets, setToolsets] = useState<string[]>([]);
  const [allOptions, setAllOptions] = useState(false);
  if (info.isError) return <ErrorState error={info.error} what="connection details" onRetry={() => void info.refetch()} />;
  if (info.isPending) return <Loading what="connection details" />;
  const d = info.data;
  const enabled = d.mounts.filter((m) => m.enabled);
  const shown = revealed ? d.token : maskedToken;
  const url = mcpUrlWith(d.mcpUrl, toolsets, allOptions);
  const pick = (name: string, on: boolean) => setToolsets(d.toolsets.map((t) => t.name).filter((n) => (n === name ? on : toolsets.includes(n))));
  return (
    <>
      <div className="page-head">
        <h1>Connect an MCP client</h1>
      </div>
      <p className="muted">
        Corral speaks MCP over Streamable HTTP. Every request needs the token below; treat it like a password (anyone with it can run workers on this
        machine). It stays hidden on screen until revealed; Copy always copies the real one.
      </p>
      <p>
        <button type="button" className="small" aria-pressed={revealed} onClick={() => setRevealed((r) => !r)}>
          {revealed ? "Hide the token" : "Reveal the token"}
        </button>
      </p>
      <section className="card stack" aria-labelledby="all-heading">
        <h2 id="all-heading" style={{ margin: 0 }}>
          Every agent, plus the corral tools
        </h2>
        <p className="small muted" style={{ margin: 0 }}>
          One server named <code>corral</code> at <code>{d.mcpUrl}</code>: tools <code>&lt;agent&gt;_run</code>, <code>_run_async</code>,{" "}
          <code>_done</code> for each agent, and <code>corral_*</code> tools to list, wait for and cancel jobs. Orchestrators read every tool on every
          turn, so the rest come in toolsets, added to the URL only if you want them:
        </p>
        <fieldset className="field">
          <legend>Show also</legend>
          <div className="tool-choices">
            {d.toolsets.map((t) => (
              <label key={t.name} className="small">
                <input type="checkbox" checked={toolsets.includes(t.name)} onChange={(e) => pick(t.name, e.target.checked)} />
                <span>
                  <span className="mono">{t.name}</span> {t.about} ({t.tools.join(", ")})
                </span>
              </label>
            ))}
            <label className="small">
              <input type="checkbox" checked={allOptions} onChange={(e) => setAllOptions(e.target.checked)} />
              <span>
                <span className="mono">options=all</span> every launch option in the schemas (timeouts, budgets, retries, a shared workdir)
              </span>
            </label>
          </div>
        </fieldset>
        <CopyBlock
          text={mcpAddCommand("corral", url, shown)}
          copy={mcpAddCommand("corral", url, d.token)}
          label="claude mcp add command for all agents"
        />
      </section>

      <section aria-labelledby="mounts-heading">
        <h2 id="mounts-heading">One agent per server</h2>
        <p className="small muted">
          Each agent is also served alone, so its tools keep pyCorral's names (<code>mcp__gemini__gemini_run</code>…). Add only the ones you want.
        </p>
        {enabled.length === 0 ? (
          <p className="muted">No agent is enabled.</p>
        ) : (
          <div className="stack">
            {enabled.map((m) => (
              <div key={m.agent}>
                <h3 className="mono">{m.agent}</h3>
                <CopyBlock
                  text={mcpAddCommand(m.agent, m.url, shown)}
                  copy={mcpAddCommand(m.agent, m.url, d.token)}
                  label={`claude mcp add command for ${m.agent}`}
                />
              </div>
            ))}
          </div>
        )}
      </section>

      <section aria-labelledby="perm-heading">
        <h2 id="perm-heading">Let Claude Code call them without asking</h2>
        <p className="small muted">
          Merge this into <code>~/.claude/settings.json</code> (or a project's <code>.claude/settings.json</code>). Each rule allows every tool of one
          MCP server.
        </p>
        <CopyBlock text={permissionsSnippet(enabled.map((m) => m.agent))} label="permissions snippet" />
      </section>

      <section aria-labelledby="token-heading">
        <h2 id="token-heading">Token and URLs</h2>
        <dl className="facts card">
          <dt>Panel</dt>
          <dd className="mono">{d.baseUrl}/</dd>
          <dt>MCP</dt>
          <dd className="mono">{d.mcpUrl}</dd>
          <dt>REST</dt>
          <dd>
            <span className="mono">{d.baseUrl}/api</span> — <Link to="/reference">API reference</Link>
          </dd>
          <dt>Token</dt>
          <dd className="mono">{shown}</dd>
          <dt>Workdir roots</dt>
          <dd className="mono">{d.workdirRoots.join(", ")}</dd>
        </dl>
      </section>

      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Signed-in browsers</h2>
        <p className="small muted">
          Opening the printed URL signs a browser in: it gets a session of its own (its cookie holds that session, never the token), which lasts until
          it goes unused for <code>CORRAL_SESSION_TTL_DAYS</code> days or is signed out here.
        </p>
        <BrowserSessions />
      </section>
    </>
  );
}
