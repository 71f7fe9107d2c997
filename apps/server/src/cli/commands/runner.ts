import { defineCommand, usageError } from "../command.js";

export const runner = defineCommand({
  name: "runner",
  summary: "run jobs on this machine for a Corral server whose registry is in PostgreSQL",
  usage: "[login <name> <labels>]",
  help: `Starts a runner in this process (docs/runners.md): it claims the jobs of agents whose
runner label is one of CORRAL_RUNNER_LABELS from the registry at CORRAL_DATABASE_URL and runs them
here, until stopped (the first Ctrl-C or SIGTERM lets its jobs finish, a second cancels them).

  login <name> <labels>   print the SQL that makes a runner's own database login (run it as the
                          registry's superuser), and exit`,
  options: {},
  positionals: { min: 0, max: 3 },
  async run({ positionals }) {
    if (positionals.length > 0 && (positionals[0] !== "login" || positionals.length !== 3)) {
      throw usageError(
        runner,
        positionals[0] === "login" ? "login takes a name and labels (comma-separated)" : `unknown argument ${JSON.stringify(positionals[0])}`,
      );
    }
    const { runRunner } = await import("../../runner/main.js");
    await runRunner(positionals);
    // `login` has printed and ends; a runner runs until a signal stops it, and exits itself.
    return positionals[0] === "login" ? 0 : new Promise<number>(() => undefined);
  },
});
