// The systemd user unit `corral service install` writes: `corral serve` as a service of the user's
// own systemd, with the settings of the shell it was installed from and in its directory, so it
// starts as `corral serve` would there (its data dir, port and token as that shell gives them).
import path from "node:path";

export interface ServiceUnit {
  /** The Node that runs corral (process.execPath). */
  node: string;
  /** The built corral command (dist/corral.js), as a real path. */
  entry: string;
  /** The environment the server starts with: the installing shell's PATH and Corral settings. */
  environment: Record<string, string>;
  /** The installing shell's directory: relative settings resolve from it, as they did there. */
  cwd: string;
}

/** Settings carried from the installing shell: the server's (CORRAL_*), where its data lives, and PATH, where the agents' CLIs are. */
export function serviceEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined) continue;
    // CORRAL_URL is `corral`'s (where a client finds the server), not the server's.
    if (name === "CORRAL_URL") continue;
    if (name.startsWith("CORRAL_") || name === "PATH" || name === "XDG_DATA_HOME" || name === "XDG_CONFIG_HOME") kept[name] = value;
  }
  return kept;
}

/** Where the unit goes: the user's systemd unit directory. */
export function unitPath(env: NodeJS.ProcessEnv, homeDir: string): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(homeDir, ".config"), "systemd", "user", "corral.service");
}

const NO_BREAKS = /[\n\r\0]/;

/**
 * A word of a unit's line, quoted for systemd: `%` starts a specifier everywhere, so it is doubled;
 * `$` starts a variable in a command's arguments only (not in its executable, nor in Environment=),
 * so it is doubled there; quotes and backslashes are escaped inside the double quotes.
 */
function quoted(word: string, where: "argument" | "plain"): string {
  if (NO_BREAKS.test(word)) throw new Error(`${JSON.stringify(word)} holds a line break or NUL, which a unit file cannot hold`);
  const escaped = word.replace(/[\\"]/g, (c) => `\\${c}`).replace(/%/g, "%%");
  return `"${where === "argument" ? escaped.replace(/\$/g, "$$$$") : escaped}"`;
}

/** systemd refuses an executable whose name holds quotes, backslashes or control characters, even quoted. */
function executable(file: string): string {
  if (/["'\\\x00-\x1f\x7f]/.test(file))
    throw new Error(`${JSON.stringify(file)} holds a quote, a backslash or a control character, which systemd will not run`);
  return quoted(file, "plain");
}

function directory(dir: string): string {
  if (NO_BREAKS.test(dir) || !path.isAbsolute(dir)) throw new Error(`${JSON.stringify(dir)} is not a directory a unit can start in`);
  return dir.replace(/%/g, "%%");
}

export function renderUnit(unit: ServiceUnit): string {
  return [
    "# Written by `corral service install`, owner-only; run it again to update.",
    "[Unit]",
    "Description=Corral: a control plane for AI coding agents",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${executable(unit.node)} ${quoted(unit.entry, "argument")} serve`,
    // A path, unquoted (systemd takes the rest of the line); specifiers still apply.
    `WorkingDirectory=${directory(unit.cwd)}`,
    ...Object.entries(unit.environment).map(([name, value]) => `Environment=${quoted(`${name}=${value}`, "plain")}`),
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
