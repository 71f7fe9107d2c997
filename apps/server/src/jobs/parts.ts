import type { JobDeps } from "./deps.js";
import { JobCancels } from "./cancels.js";
import { JobEngine } from "./engine.js";
import { JobEvents } from "./job-events.js";
import { JobStore } from "./job-store.js";
import { JobLaunches } from "./launches.js";
import { OutputReader } from "./output-reader.js";
import { JobQueries } from "./queries.js";
import { RunnerOutputCopy } from "./remote/output-copy.js";
import { RemoteJobs } from "./remote/remote-jobs.js";
import { JobWaits } from "./waits.js";

/** The job engine's parts, one job each, as the doors and the composition root hold them. */
export interface JobParts {
  /** Reading jobs: one, a page, a conversation's, a launch's, a job's attempts. */
  jobs: JobQueries;
  /** Checking and storing launches. */
  launches: JobLaunches;
  /** Reading a job's output log. */
  output: OutputReader;
  /** Waiting for jobs to end. */
  waits: JobWaits;
  cancels: JobCancels;
  /** Jobs' changes and output, told once stored. */
  jobEvents: JobEvents;
  /** The jobs this process runs: queues, recovery, shutdown, agents' changes, a runner's claims. */
  jobEngine: JobEngine;
  /** Jobs remote runners hold: what they NOTIFY, their output, their leases. */
  remoteJobs: RemoteJobs;
  /** Where job changes are stored and announced: for services over the engine (the worktree review). */
  store: JobStore;
}

/** Builds the job engine over `deps`: the server and a `corral runner` each build one. */
export function createJobParts(deps: JobDeps): JobParts {
  const jobEvents = new JobEvents();
  const store = new JobStore(deps.registry, deps.audit, jobEvents, deps.config.dataDir);
  const jobs = new JobQueries(deps.registry);
  const waits = new JobWaits(jobEvents, jobs);
  const jobEngine = new JobEngine(deps, store);
  const { scheduler, driver } = jobEngine;
  const outputCopy = new RunnerOutputCopy(deps.registry.jobOutput, deps.config.dataDir, (event) => store.output(event));
  const remoteJobs = new RemoteJobs(deps, store, scheduler, outputCopy, () => jobEngine.recovered);
  return {
    jobs,
    launches: new JobLaunches(deps, store, scheduler),
    output: new OutputReader(deps.registry, deps.config.dataDir, jobs, remoteJobs),
    waits,
    cancels: new JobCancels(deps, store, scheduler, driver, jobs, waits),
    jobEvents,
    jobEngine,
    remoteJobs,
    store,
  };
}
