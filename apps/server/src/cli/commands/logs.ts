import { defineCommand } from "../command.js";
import { exitForStatus } from "../exit-codes.js";
import { followJob, type OutputPiece } from "../follow.js";
import { jobSummary, printJson } from "../format.js";
import { writeOutput } from "../launch.js";

export const logs = defineCommand({
  name: "logs",
  summary: "print a job's output; -f follows it to the job's end",
  usage: "[-f] <job>",
  help: `Prints the job's output as its worker printed it: its stdout on stdout, its stderr (and
Corral's own notes) on stderr. With -f, follows the live stream until the job ends, reconnecting
and resuming where it stopped if the connection drops (for up to a minute), and exits with the
job's status (see corral --help). Without -f, prints what there is and exits with the job's status
if it has ended, else 0.

  -f, --follow       follow the output until the job ends
  --json             one JSON object per line: {"type":"output","stream","text","cursor"} for each
                     piece, then {"type":"job","job"} with the job`,
  options: { follow: { type: "boolean", short: "f" } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals, json, target }) {
    const [jobId = ""] = positionals;
    const write = json ? (piece: OutputPiece) => printJson({ type: "output", ...piece }) : writeOutput;
    const job = await followJob(target(), jobId, write, !values.follow);
    if (json) printJson({ type: "job", job });
    else if (values.follow) process.stderr.write(`${jobSummary(job)}\n`);
    return exitForStatus(job.status);
  },
});
