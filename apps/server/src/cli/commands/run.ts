import type { Job, LaunchJobBody } from "@corral/shared";
import { defineCommand } from "../command.js";
import { request } from "../client.js";
import { exitForStatus } from "../exit-codes.js";
import { printJson } from "../format.js";
import { awaitJob, LAUNCH_HELP, LAUNCH_OPTIONS, launchFields, promptOf } from "../launch.js";

export const run = defineCommand({
  name: "run",
  summary: "run a prompt on one agent and print its answer",
  usage: "[options] <agent> <prompt…>",
  help: `Launches one job and waits for its end, then prints the agent's answer on stdout (its progress
goes to stderr). Exits with the job's status (see corral --help). The words after the agent are the
prompt; put -- before a prompt that starts with -.

  --session JOB      continue the conversation of an earlier job of the same agent
${LAUNCH_HELP}
  --json             print the job as JSON (the ended job; with --async the job as launched)`,
  options: { ...LAUNCH_OPTIONS, session: { type: "string" } },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY },
  async run({ values, positionals, json, target }) {
    const [agent = "", ...words] = positionals;
    const body = { agent, prompt: promptOf(words), session: values.session, ...launchFields(run, values) } satisfies LaunchJobBody;
    const server = target();
    const launched = await request<Job>(server, "POST", "/api/jobs", body);
    if (values.async) {
      if (json) printJson(launched);
      else process.stdout.write(`${launched.id}\n`);
      return 0;
    }
    const ended = await awaitJob(server, launched, json);
    if (json) printJson(ended);
    else if (ended.finalText) process.stdout.write(ended.finalText.endsWith("\n") ? ended.finalText : `${ended.finalText}\n`);
    return exitForStatus(ended.status);
  },
});
