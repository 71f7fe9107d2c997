import os from "node:os";
import path from "node:path";
import { LOCAL_RUNNER, RunnerLabelSchema } from "@corral/shared";
import { z } from "zod";
import { ConfigError, loadConfig, type AppConfig } from "../config.js";

/**
 * The variables only `corral runner` reads (the rest of its settings are the server's, config.ts).
 * Each `.describe()` is what docs/settings.md says of it; the checks below word their own refusals.
 */
export const RunnerEnvSchema = z.object({
  CORRAL_RUNNER_LABELS: z
    .string()
    .optional()
    .describe(
      "`corral runner`: the labels whose agents' jobs it claims, comma-separated (`gpu,codex`; `[a-z0-9._-]`, up to 63 each; not `local`). Its login must allow them.",
    )
    .meta({ defaultText: "the hostname" }),
  CORRAL_RUNNER_NAME: z
    .string()
    .optional()
    .describe(
      "`corral runner`: the name it runs under, one machine's (a runner refuses a name a live runner on another host holds; not `local`, at most 100 characters). Its login must be that runner's.",
    )
    .meta({ defaultText: "the hostname" }),
  CORRAL_RUNNER_POLL_MS: z
    .string()
    .optional()
    .describe("`corral runner`: how often it looks for jobs no NOTIFY told it of; 100 to 3600000.")
    .meta({ defaultText: "`2000`" }),
});

/** What `corral runner` is told by its environment. */
export interface RunnerSettings {
  /** The settings its jobs run under, as the server's run under its own (workdir roots, kill grace…). */
  config: AppConfig;
  /** The registry the server uses: runners need it in PostgreSQL. */
  databaseUrl: string;
  /** It claims the jobs of agents whose runnerLabel is one of these. */
  labels: string[];
  name: string;
  hostname: string;
  /** How often it looks for jobs to claim when it hears of none (CORRAL_RUNNER_POLL_MS); the runner's default when undefined. */
  claimPollMs?: number;
}

/**
 * CORRAL_DATABASE_URL (required), CORRAL_RUNNER_LABELS (a comma list; default: the hostname),
 * CORRAL_RUNNER_NAME (default: the hostname), CORRAL_RUNNER_POLL_MS (how often it looks for
 * jobs NOTIFY did not tell it of; default 2000) and CORRAL_DATA_DIR (default: its own,
 * ~/.local/share/corral-runner, so a runner beside a server never shares its job logs).
 */
export function loadRunnerSettings(env: NodeJS.ProcessEnv = process.env, hostname = os.hostname()): RunnerSettings {
  const databaseUrl = env.CORRAL_DATABASE_URL?.trim();
  if (!databaseUrl) {
    throw new ConfigError(
      "corral runner needs CORRAL_DATABASE_URL: the PostgreSQL URL of the registry the Corral server uses (postgres://user:password@host:5432/database).",
    );
  }
  const homeDir = env.HOME || os.homedir();
  const dataHome = env.XDG_DATA_HOME || path.join(homeDir, ".local", "share");
  const config = loadConfig({ ...env, CORRAL_DATA_DIR: env.CORRAL_DATA_DIR || path.join(dataHome, "corral-runner") });
  const own = RunnerEnvSchema.parse(env);
  const given = own.CORRAL_RUNNER_LABELS?.trim();
  // Both default to the hostname: one that is the server's own runner's name is said as such.
  if (hostname.toLowerCase() === LOCAL_RUNNER && (!given || !own.CORRAL_RUNNER_NAME?.trim())) {
    throw new ConfigError(
      `This machine's hostname is "${hostname}", the name of the server's own runner, which a runner's name and labels default to: set CORRAL_RUNNER_NAME and CORRAL_RUNNER_LABELS (a comma list such as gpu,codex).`,
    );
  }
  const labels = given
    ? [
        ...new Set(
          given
            .split(",")
            .map((label) => label.trim())
            .filter(Boolean),
        ),
      ]
    : [hostname.toLowerCase()];
  for (const label of labels) {
    const checked = RunnerLabelSchema.safeParse(label);
    if (!checked.success) {
      throw new ConfigError(
        `CORRAL_RUNNER_LABELS: "${label}" is not a label: ${checked.error.issues[0]?.message ?? "invalid"}. Give a comma list such as gpu,codex.`,
      );
    }
  }
  if (!labels.length) throw new ConfigError("CORRAL_RUNNER_LABELS names no label: give a comma list such as gpu,codex.");
  const name = own.CORRAL_RUNNER_NAME?.trim() || hostname;
  if (name.length > 100) throw new ConfigError("CORRAL_RUNNER_NAME: use at most 100 characters.");
  if (name.toLowerCase() === LOCAL_RUNNER) {
    throw new ConfigError(`CORRAL_RUNNER_NAME: "${name}" is the server's own runner; give this machine another name (its hostname is ${hostname}).`);
  }
  const poll = own.CORRAL_RUNNER_POLL_MS?.trim();
  const claimPollMs = poll ? Number(poll) : undefined;
  if (claimPollMs !== undefined && !(Number.isInteger(claimPollMs) && claimPollMs >= 100 && claimPollMs <= 3_600_000)) {
    throw new ConfigError(`CORRAL_RUNNER_POLL_MS: "${poll}" is not a whole number of milliseconds from 100 to 3600000; leave it unset for 2000.`);
  }
  return { config, databaseUrl, labels, name, hostname, ...(claimPollMs === undefined ? {} : { claimPollMs }) };
}
