// The systemd user unit `corral service install` writes: `corral serve` as a service of the user's
// own systemd, with the settings of the shell it was installed from (never the token: it stays in
// the data dir's token file, which the server makes and reads as under `corral serve`).
import path from "node:path";

export interface ServiceUnit {
  /** The Node that runs corral (process.execPath). */
  node: string;
  /** The built corral command (dist/corral.js), as a real path. */
  entry: string;
  /** The environment the server starts with: the installing shell's PATH and Corral settings. */
  environment: Record<string, string>;
}

/** Settings carried from the installing shell: the server's (CORRAL_*), where its data lives, and PATH, where the agents' CLIs are. */
export function serviceEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined) continue;
    // The service keeps its token in the data dir's file, which `corral` on this machine reads; CORRAL_URL is corral's, not the server's.
    if (name === "CORRAL_TOKEN" || name === "CORRAL_URL") continue;
    if (name.startsWith("CORRAL_") || name === "PATH" || name === "XDG_DATA_HOME" || name === "XDG_CONFIG_HOME") kept[name] = value;
  }
  return kept;
}

/** Where the unit goes: the user's systemd unit directory. */
export function unitPath(env: NodeJS.ProcessEnv, homeDir: string): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(homeDir, ".config"), "systemd", "user", "corral.service");
}

/**
 * A word of a unit's line, quoted for systemd: `%` starts a specifier everywhere, so it is doubled;
 * `$` starts a variable on a command line only (in Environment= it has no special meaning), so it is
 * doubled there; quotes and backslashes are escaped inside the double quotes.
 */
function quoted(word: string, where: "command" | "environment"): string {
  if (/[\n\r\0]/.test(word)) throw new Error(`${JSON.stringify(word)} holds a line break or NUL, which a unit file cannot hold`);
  const escaped = word.replace(/[\\"]/g, (c) => `\\${c}`).replace(/%/g, "%%");
  return `"${where === "command" ? escaped.replace(/\$/g, "$$$$") : escaped}"`;
}

export function renderUnit(unit: ServiceUnit): string {
  return [
    "# Written by `corral service install`; run it again to update (the token is not here: see the data dir's token file).",
    "[Unit]",
    "Description=Corral: a control plane for AI coding agents",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${quoted(unit.node, "command")} ${quoted(unit.entry, "command")} serve`,
    ...Object.entries(unit.environment).map(([name, value]) => `Environment=${quoted(`${name}=${value}`, "environment")}`),
    // Only the server is stopped: its workers go on and the next start follows them, as after any restart.
    "KillMode=process",
    "Restart=on-failure",
    "RestartSec=5",
    "TimeoutStopSec=30",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}
