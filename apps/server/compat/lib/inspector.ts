// The MCP Inspector CLIs the suite drives, one way to call each: 0.15.0 (the last on Node 20; no
// headers, no era flag: it speaks 2025-11-25 only) and 2.x on Node 24, which sends the token with
// `--header`, pins the protocol era with `--protocol-era` and prints `--format json` envelopes.
import { type ClientBuild, type ClientRun, cleanEnv, clientBuilds, runClient } from "./clients.js";
import { type Era, SERVED_ERAS } from "./eras.js";

export interface InspectorCli {
  build: ClientBuild;
  /** The era it is pinned to; null when it cannot pin one. */
  era: Era | null;
  /** For test names: `0.15.0 (pinned)`, `2.12.0 (newest), legacy era`. */
  label: string;
  /** Whether it sends the token itself; if not, the test puts the header proxy in front of the server. */
  sendsHeaders: boolean;
  /** Exit code of a call whose tool answered `isError: true` (2.x exits 5, `tool_is_error`). */
  toolErrorExit: number;
  run(url: string, token: string | null, args: string[], options: { cwd: string; home: string }): Promise<InspectorRun>;
}

export interface InspectorRun {
  run: ClientRun;
  /** The MCP result it printed, when it printed one. */
  result: unknown;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function legacyCli(build: ClientBuild): InspectorCli {
  return {
    build,
    era: null,
    label: build.label,
    sendsHeaders: false,
    toolErrorExit: 0,
    async run(url, _token, args, { cwd, home }) {
      const run = await runClient(build.bin, ["--cli", url, "--transport", "http", ...args], {
        cwd,
        env: cleanEnv(home, {}, build.path),
        timeoutMs: 60_000,
      });
      return { run, result: parsed(run.stdout) };
    },
  };
}

function cli2(build: ClientBuild, era: Era): InspectorCli {
  return {
    build,
    era,
    label: `${build.label}, ${era} era`,
    sendsHeaders: true,
    toolErrorExit: 5,
    async run(url, token, args, { cwd, home }) {
      // --stored-auth-only: a refused token ends the run instead of starting an interactive OAuth login.
      const auth = token ? ["--header", `Authorization: Bearer ${token}`] : [];
      const run = await runClient(
        build.bin,
        ["--cli", url, "--transport", "http", "--protocol-era", era, "--format", "json", "--stored-auth-only", ...auth, ...args],
        { cwd, env: cleanEnv(home, {}, build.path), timeoutMs: 60_000 },
      );
      const envelope = parsed(run.stdout);
      return { run, result: typeof envelope === "object" && envelope !== null && "result" in envelope ? envelope.result : undefined };
    },
  };
}

/** Every Inspector the suite runs, each 2.x once per era Corral serves. */
export function inspectorClis(): InspectorCli[] {
  return clientBuilds("mcp-inspector").flatMap((build) =>
    build.version.startsWith("0.") ? [legacyCli(build)] : SERVED_ERAS.map((era) => cli2(build, era)),
  );
}
