import { ConfigError } from "../config.js";
import type { PgHandle } from "../db/pg/client.js";
import type { RunnerSettings } from "./settings.js";

interface Identity {
  login: string;
  /** Subject to the registry's row-level security: not its owner, not a superuser. */
  restricted: boolean;
  name: string | null;
  labels: string[];
}

/**
 * Refuses to start under a name or labels the registry's owner did not give this login
 * (runner_logins, drizzle-pg/0007_runner_identity.sql), saying what to set: PostgreSQL would
 * refuse them anyway, with a policy's name instead of the fix. The owner's own login (or a
 * superuser's) is trusted with the whole registry and is not asked.
 */
export async function checkRunnerIdentity(handle: PgHandle, settings: Pick<RunnerSettings, "name" | "labels">): Promise<void> {
  const { rows } = await handle.db.$client.query<Identity>(
    "select session_user as login, row_security_active('public.jobs') as restricted, corral_runner_name() as name, corral_runner_labels() as labels",
  );
  const me = rows[0];
  if (!me?.restricted) return;
  const allow = `corral runner login ${me.name ?? settings.name} ${settings.labels.join(",")}`;
  if (me.name === null) {
    throw new ConfigError(
      `The PostgreSQL login ${me.login} is not a runner's login of this registry: the registry's owner makes one with \`${allow}\` (its statements run as PostgreSQL's superuser; docs/runners.md, "Runners"), then CORRAL_DATABASE_URL names that login.`,
    );
  }
  if (me.name !== settings.name) {
    throw new ConfigError(
      `CORRAL_RUNNER_NAME: the login ${me.login} is runner "${me.name}": set CORRAL_RUNNER_NAME=${me.name}, or use the login of runner "${settings.name}".`,
    );
  }
  const refused = settings.labels.filter((label) => !me.labels.includes(label));
  if (refused.length) {
    throw new ConfigError(
      `CORRAL_RUNNER_LABELS: runner ${me.name} may serve ${me.labels.length ? me.labels.join(", ") : "no label"}, not ${refused.join(", ")}: set CORRAL_RUNNER_LABELS=${me.labels.join(",") || "…"}, or have the registry's owner allow them (\`${allow}\`).`,
    );
  }
}
