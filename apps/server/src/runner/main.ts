// `corral runner` (`pnpm runner` in a checkout): runs the jobs of agents whose runner label it
// announces, on this machine, reporting through the registry in PostgreSQL.
import { ConfigError } from "../config.js";
import { describePgUrl } from "../db/pg/url.js";
import { RegistryError } from "../db/registry-error.js";
import { runnerLogin, runnerLoginStatements } from "./login.js";
import { Runner } from "./runner.js";
import { loadRunnerSettings } from "./settings.js";

async function main(args: string[]): Promise<void> {
  if (args[0] === "login") {
    process.stdout.write(runnerLoginStatements(runnerLogin(args[1], args[2])));
    return;
  }
  const settings = loadRunnerSettings();
  const runner = await Runner.start(settings, (what, err) => {
    process.stderr.write(`corral runner: ${what} failed: ${err instanceof Error ? err.message : String(err)}\n`);
  });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      process.stdout.write("corral runner: stopping\n");
      try {
        await runner.stop();
        process.exit(0);
      } catch (err) {
        process.stderr.write(`corral runner: could not stop cleanly: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      }
    })());
  // The first signal lets the running jobs finish (nothing claimed meanwhile); a second cancels them.
  let signals = 0;
  const onSignal = () => {
    const running = runner.jobs.jobEngine.activeIds().length;
    if (++signals > 1 || running === 0) {
      if (running) process.stdout.write(`corral runner: cancelling the ${running} job(s) it runs\n`);
      void stop();
      return;
    }
    process.stdout.write(`corral runner: finishing the ${running} job(s) it runs and claiming no more; Ctrl-C (or SIGTERM) again cancels them\n`);
    void runner.finishJobs().then(stop, stop);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // Said once a signal stops it cleanly: whoever waits for this line may stop it at once.
  process.stdout.write(
    `\nCorral runner ${settings.name} is running.\n  Id:       ${runner.id}\n  Labels:   ${settings.labels.join(", ")}\n  Registry: ${describePgUrl(settings.databaseUrl)}\n  Data:     ${settings.config.dataDir}\n\n`,
  );
}

/** Runs the runner with `args` (`login <name> <labels>` prints a login's statements); a start that fails exits 1 saying why. */
export function runRunner(args: string[]): Promise<void> {
  return main(args).catch((err: unknown) => {
    const known = err instanceof ConfigError || err instanceof RegistryError;
    process.stderr.write(
      `${known ? (err as Error).message : `corral runner could not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`}\n`,
    );
    process.exit(1);
  });
}
