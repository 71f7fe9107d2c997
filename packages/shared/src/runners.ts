import { z } from "zod";
import { RunnerLabelSchema } from "./agents.js";

/** A `corral runner` that announced itself to the registry. */
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

export const RunnerListSchema = z.object({ runners: z.array(RunnerSchema) });
export type RunnerList = z.infer<typeof RunnerListSchema>;
