#!/usr/bin/env node
// `corral`: Corral from a terminal. It talks to a running server through its REST API and
// WebSocket only, as any client does, with the token the server keeps in its data dir.
import { all } from "./commands/all.js";
import { agents } from "./commands/agents.js";
import { cancel } from "./commands/cancel.js";
import { jobs } from "./commands/jobs.js";
import { logs } from "./commands/logs.js";
import { run } from "./commands/run.js";
import { runner } from "./commands/runner.js";
import { serve } from "./commands/serve.js";
import { service } from "./commands/service.js";
import { shell } from "./commands/shell.js";
import { status } from "./commands/status.js";
import type { Command } from "./command.js";
import { CliError, EXIT } from "./exit-codes.js";
import { oneLine } from "./format.js";
import { corralVersion } from "../lib/version.js";
import { resolveTarget, type Target } from "./settings.js";

const COMMANDS: Command[] = [serve, runner, service, status, agents, shell, run, logs, cancel, all, jobs];

const OVERVIEW = `corral: the Corral server, its runners, and its jobs from a terminal

Usage: corral <command> [options] [arguments]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(8)} ${c.summary}`).join("\n")}

Every command takes --json (output for scripts) and --help; corral --version prints the version.
corral alone, in a terminal, opens corral shell.

The server: CORRAL_URL (default: http://CORRAL_HOST:CORRAL_PORT, as the server reads them) and
CORRAL_TOKEN (default: the token file in the server's data dir, CORRAL_DATA_DIR).

Exit codes:
  0  succeeded (for commands that wait for no job: done)
  1  the job failed
  2  usage error: an unknown command or option, a missing argument
  3  the job timed out
  4  the job was cancelled
  5  the job passed its budget, or a provider's budget refused it
  6  the job was lost (its worker vanished while the server was down)
  7  no server answers at the address
  8  the server refused the token, or there is none
  9  the server refused the request (an unknown agent or job, a field it would not take)
  70 a fault in corral itself
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  let target: Target | undefined;
  const resolve = () => (target ??= resolveTarget(process.env));
  // `corral` alone, typed in a terminal, opens the interactive prompt; anywhere else it prints help.
  if (name === undefined && process.stdin.isTTY && process.stdout.isTTY) return shell.execute([], resolve, process.env);
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(OVERVIEW);
    return name === undefined ? EXIT.usage : 0;
  }
  if (name === "--version" || name === "-V") {
    process.stdout.write(`corral ${corralVersion()}\n`);
    return EXIT.succeeded;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command)
    throw new CliError(
      `unknown command ${JSON.stringify(oneLine(name))}\nCommands: ${COMMANDS.map((c) => c.name).join(", ")} (corral --help)`,
      EXIT.usage,
    );
  return command.execute(rest, resolve, process.env);
}

// `corral logs -f <job> | head`: once the reader has gone, stop as any filter does, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(EXIT.succeeded);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof CliError) {
      process.stderr.write(`corral: ${err.message}\n`);
      process.exitCode = err.code;
    } else {
      process.stderr.write(`corral: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = EXIT.internal;
    }
  },
);
