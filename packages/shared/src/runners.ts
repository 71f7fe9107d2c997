import { z } from "zod";

/**
 * The built-in runner: the Corral server itself, which runs the jobs of agents without a runner
 * label. It is a runner like any other to every reader (the Runners page, a job's `runner`), so
 * the name is no label and no `corral runner` may take it.
 */
export const LOCAL_RUNNER = "local";

/** A runner's label, as runners announce it and agents ask for it: `gpu`, `codex`, a hostname. */
export const RunnerLabelSchema = z
  .string()
  .regex(/^[a-z0-9._-]{1,63}$/, "use 1-63 lowercase letters, digits, '.', '_' or '-' (a label a runner announces, such as gpu or a hostname)")
  .refine(
    (label) => label !== LOCAL_RUNNER,
    `"${LOCAL_RUNNER}" is the server itself, not a label: leave the runner label empty to run on the server`,
  );

/**
 * A runner that announced itself to the registry: a `corral runner`, or `local`, the server
 * (registered at each start, and running whenever the server answers).
 */
export const RunnerSchema = z.object({
  /** New at every start of the runner. */
  id: z.string(),
  name: z.string(),
  /** It runs the jobs of agents whose runnerLabel is one of these. */
  labels: z.array(RunnerLabelSchema),
  hostname: z.string(),
  version: z.string(),
  startedAt: z.number(),
  heartbeatAt: z.number(),
  /** When it said it stopped; null while it runs, or if it died without saying. */
  stoppedAt: z.number().nullable(),
  /** `running`: heartbeating; `silent`: no heartbeat within its lease (its running jobs were marked lost); `stopped`: it said so. */
  state: z.enum(["running", "silent", "stopped"]),
  /** Jobs it holds now (claimed or running). */
  activeJobs: z.number().int(),
});
export type Runner = z.infer<typeof RunnerSchema>;

export const RunnerListSchema = z.object({
  runners: z.array(RunnerSchema),
  /** Whether `corral runner`s can join: the registry is in PostgreSQL. False on a one-machine (SQLite) server, whose panel never mentions runners. */
  multiMachine: z.boolean(),
});
export type RunnerList = z.infer<typeof RunnerListSchema>;
