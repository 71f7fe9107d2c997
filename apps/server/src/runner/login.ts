import { randomBytes } from "node:crypto";
import { LOCAL_RUNNER, RunnerLabelSchema } from "@corral/shared";
import { ConfigError } from "../config.js";

/** A runner's own PostgreSQL login: its role, and the name and labels the registry's owner lets it serve. */
export interface RunnerLogin {
  role: string;
  name: string;
  labels: string[];
  password: string;
}

/**
 * `corral runner login <name> <labels>` (`corral runner login box-1 gpu,codex`): a login of its own
 * for the runner `name`, allowed the comma list `labels`, with a new password. Its role is named
 * after it (corral_runner_<name>, folded to what an unquoted PostgreSQL name may hold).
 */
export function runnerLogin(name: string | undefined, labelList: string | undefined, password = randomBytes(18).toString("base64url")): RunnerLogin {
  const usage = "give the runner's name and its labels: corral runner login box-1 gpu,codex";
  if (!name?.trim() || !labelList?.trim()) throw new ConfigError(`corral runner login: ${usage}`);
  const trimmed = name.trim();
  if (trimmed.length > 100) throw new ConfigError("corral runner login: a runner's name has at most 100 characters.");
  if (trimmed.toLowerCase() === LOCAL_RUNNER)
    throw new ConfigError(`corral runner login: "${trimmed}" is the server's own runner; give another name.`);
  const labels = [
    ...new Set(
      labelList
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  ];
  for (const label of labels) {
    const checked = RunnerLabelSchema.safeParse(label);
    if (!checked.success) throw new ConfigError(`corral runner login: "${label}" is not a label: ${checked.error.issues[0]?.message ?? "invalid"}.`);
  }
  if (!labels.length) throw new ConfigError(`corral runner login: ${usage}`);
  // PostgreSQL names stop at 63 bytes.
  const role = `corral_runner_${trimmed.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63);
  return { role, name: trimmed, labels, password };
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The statements that create the login (as PostgreSQL's superuser) and tell the registry which runner it is, and how the runner then starts. */
export function runnerLoginStatements({ role, name, labels, password }: RunnerLogin): string {
  const labelArray = `ARRAY[${labels.map(literal).join(", ")}]::text[]`;
  return [
    `-- Runner ${name}: run as PostgreSQL's superuser in the registry's database (sudo -u postgres psql corral),`,
    "-- after apps/server/src/runner/runner-role.sql. Again later to change its labels (its password is then new).",
    `DO $$ BEGIN CREATE ROLE ${role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;`,
    `ALTER ROLE ${role} LOGIN PASSWORD ${literal(password)};`,
    `GRANT corral_runners TO ${role};`,
    `INSERT INTO runner_logins (login, name, labels) VALUES (${literal(role)}, ${literal(name)}, ${labelArray})`,
    "  ON CONFLICT (login) DO UPDATE SET name = excluded.name, labels = excluded.labels;",
    "-- Then, on the runner's machine (the registry's host and database in the URL):",
    `--   CORRAL_DATABASE_URL=postgres://${role}:${encodeURIComponent(password)}@<host>:5432/corral CORRAL_RUNNER_NAME=${name} CORRAL_RUNNER_LABELS=${labels.join(",")} corral runner`,
    "",
  ].join("\n");
}
