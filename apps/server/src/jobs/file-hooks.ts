import path from "node:path";
import type { FileWatcher } from "./file-watcher.js";
import type { JobHooks } from "./deps.js";
import { jobDataPaths } from "./worker-process.js";

/** A job's file changes recorded around its worker's life: where the server and every runner watch them. */
export function fileHooks(files: FileWatcher, dataDir: string): JobHooks {
  const snapshotFile = (jobId: string) => path.join(jobDataPaths(dataDir, jobId).dir, "workdir-before.json");
  return {
    starting: (row) => files.begin(row.id, row.workdir, snapshotFile(row.id), row.attempt > 1),
    resumed: (row) => void files.resume(row.id, row.workdir, snapshotFile(row.id)).catch(() => undefined),
    ended: (row, ran) => files.end(row.id, ran),
  };
}
