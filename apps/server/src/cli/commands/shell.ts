import { createInterface, type Interface } from "node:readline";
import type { AgentList, AgentWithAvailability, Job, JobGroup, JobList } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { CliError, EXIT } from "../exit-codes.js";
import { StoppedWaiting } from "../follow.js";
import { jobDuration, jobSummary, oneLine, table } from "../format.js";
import { followReadable, ReadablePrinter } from "../readable.js";
import type { Target } from "../settings.js";

const COMMANDS_HELP = `  <prompt>           run it on the active agent and show its answer as it comes
  /agent <name>      make <name> the active agent
  /agents            the agents: kind, enabled, installed, model
  /all <prompt>      run it on every enabled, available agent; each answer under its agent's name
  /logs <agent>      that agent's recent jobs, and the last one's output
  /status            jobs running and queued, agents available
  /cancel            cancel the jobs launched from this shell that are still under way
  /help              this list
  /quit              leave (Ctrl+D too); jobs under way run on
Ctrl+C while an answer comes stops waiting for it (the job runs on: /cancel stops it); at the
prompt it clears the line, and twice in a row leaves.`;

export const shell = defineCommand({
  name: "shell",
  summary: "an interactive prompt: talk to one agent, or all, and watch their answers",
  usage: "[agent]",
  help: `Opens a prompt in the shape of the multi-agent orchestrator's: a line you type runs as a job
on the active agent (the one named, else the first enabled and available one), and its answer is
shown as it comes, as the panel's Readable view shows it. Lines starting with / are commands:

${COMMANDS_HELP}

History (up and down) and line editing are readline's; the history lasts as long as the shell.`,
  options: {},
  positionals: { min: 0, max: 1 },
  async run({ positionals, target }) {
    const server = target();
    const agents = await listAgents(server);
    const named = positionals[0];
    if (named !== undefined && !agents.some((a) => a.name === named)) throw unknownAgent(named, agents);
    const active = named ?? agents.find((a) => a.enabled && a.availability.available)?.name ?? agents[0]?.name;
    if (active === undefined)
      throw new CliError("the server has no agent to talk to: add one (corral agents, the panel's Agents page)", EXIT.refused);
    await new Shell(server, active).run();
    return EXIT.succeeded;
  },
});

const listAgents = async (server: Target) => (await request<AgentList>(server, "GET", "/api/agents")).agents;

const unknownAgent = (name: string, agents: AgentWithAvailability[]) =>
  new CliError(`no agent named ${oneLine(name, 80)}; the agents are ${agents.map((a) => a.name).join(", ")}`, EXIT.refused);

/** One interactive session: the active agent, the jobs launched from it, and what is being waited for. */
class Shell {
  private readonly rl: Interface;
  /** Jobs launched here, to /cancel. */
  private readonly launched = new Set<string>();
  /** Set while an answer is awaited: Ctrl+C aborts the wait. */
  private waiting: AbortController | null = null;
  private interruptedAtPrompt = false;
  /** The input ended (Ctrl+D, a pipe's end): the lines it held are still run, with no prompt (Node 22+ throws on one). */
  private inputClosed = false;
  private readonly out = (text: string) => process.stdout.write(text);

  constructor(
    private readonly server: Target,
    private active: string,
  ) {
    this.rl = createInterface({ input: process.stdin, output: process.stdout, historySize: 1000, terminal: process.stdin.isTTY === true });
    this.rl.on("SIGINT", () => this.interrupt());
    this.rl.on("close", () => {
      this.inputClosed = true;
    });
  }

  async run(): Promise<void> {
    this.out(`Corral at ${this.server.url}; talking to ${this.active}. /help lists the commands, /quit leaves.\n`);
    this.prompt();
    for await (const line of this.rl) {
      this.interruptedAtPrompt = false;
      const text = line.trim();
      if (text === "/quit" || text === "/exit") break;
      if (text !== "") {
        try {
          await this.handle(text);
        } catch (err) {
          this.out(
            err instanceof StoppedWaiting
              ? "· stopped waiting; what was launched runs on (/cancel stops it)\n"
              : `error: ${err instanceof Error ? oneLine(err.message) : String(err)}\n`,
          );
        }
      }
      this.prompt();
    }
    if (!this.inputClosed) this.rl.close();
  }

  private prompt(): void {
    if (this.inputClosed) return;
    this.rl.setPrompt(`${this.active}> `);
    this.rl.prompt();
  }

  private interrupt(): void {
    if (this.inputClosed) return;
    if (this.waiting) {
      this.waiting.abort();
      return;
    }
    if (this.interruptedAtPrompt || this.rl.line === "") {
      if (this.interruptedAtPrompt) {
        this.out("\n");
        this.rl.close();
        return;
      }
      this.out("\n(Ctrl+C again, /quit or Ctrl+D to leave)\n");
    } else this.out("\n");
    this.interruptedAtPrompt = true;
    this.rl.write(null, { ctrl: true, name: "u" });
    this.prompt();
  }

  private async handle(text: string): Promise<void> {
    if (!text.startsWith("/")) return this.ask(this.active, text);
    const [command = ""] = text.slice(1).split(/\s+/);
    const argument = text.slice(1 + command.length).trim();
    switch (command) {
      case "agent":
        return this.choose(argument);
      case "agents":
        return this.showAgents();
      case "all":
        if (!argument) throw new Error("/all needs a prompt: /all <prompt>");
        return this.askAll(argument);
      case "logs":
        return this.showLogs(argument || this.active);
      case "status":
        return this.showStatus();
      case "cancel":
        return this.cancelLaunched();
      case "help":
        this.out(`${COMMANDS_HELP}\n`);
        return;
      default:
        throw new Error(`unknown command /${oneLine(command, 40)}; /help lists them`);
    }
  }

  /** Waits for `wait`, which Ctrl+C aborts (the job runs on). */
  private async awaiting<T>(wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.waiting = new AbortController();
    try {
      return await wait(this.waiting.signal);
    } finally {
      this.waiting = null;
    }
  }

  private async launch(agent: string, prompt: string): Promise<Job> {
    const job = await request<Job>(this.server, "POST", "/api/jobs", { agent, prompt });
    this.launched.add(job.id);
    return job;
  }

  private async ask(agent: string, prompt: string): Promise<void> {
    const job = await this.launch(agent, prompt);
    this.out(`· job ${job.id} on ${agent}\n`);
    const printer = new ReadablePrinter(this.out);
    const ended = await this.awaiting((signal) => followReadable(this.server, job.id, printer, false, signal));
    this.launched.delete(ended.id);
    this.out(`· ${jobSummary(ended)}\n`);
  }

  private async askAll(prompt: string): Promise<void> {
    const names = (await listAgents(this.server)).filter((a) => a.enabled && a.availability.available).map((a) => a.name);
    if (!names.length) throw new Error("no agent is enabled and available: see /agents");
    const group = await request<JobGroup>(this.server, "POST", "/api/jobs/many", { agents: names, prompt });
    for (const job of group.jobs) this.launched.add(job.id);
    this.out(`· ${group.jobs.length} jobs: ${group.jobs.map((j) => `${j.agent} ${j.id}`).join(", ")}\n`);
    // Each answer whole under its agent's name, in the order they end.
    await this.awaiting((signal) =>
      Promise.all(
        group.jobs.map(async (job) => {
          let answer = "";
          const ended = await followReadable(this.server, job.id, new ReadablePrinter((text) => (answer += text)), false, signal);
          this.launched.delete(ended.id);
          this.out(`\n== ${oneLine(ended.agent)} ==\n${answer}· ${jobSummary(ended)}\n`);
        }),
      ),
    );
  }

  private async choose(name: string): Promise<void> {
    if (!name) {
      this.out(`the active agent is ${this.active}; /agent <name> changes it\n`);
      return;
    }
    const agents = await listAgents(this.server);
    const agent = agents.find((a) => a.name === name);
    if (!agent) throw unknownAgent(name, agents);
    this.active = agent.name;
    const state = !agent.enabled
      ? " (disabled: its jobs are refused)"
      : !agent.availability.available
        ? ` (not available: ${oneLine(agent.availability.hint ?? "")})`
        : "";
    this.out(`talking to ${agent.name}, a ${agent.kind} agent${state}\n`);
  }

  private async showAgents(): Promise<void> {
    const rows = (await listAgents(this.server)).map((a) => [
      `${a.name === this.active ? "*" : " "} ${a.name}`,
      a.kind,
      a.enabled ? "yes" : "no",
      a.availability.available ? "yes" : oneLine(`no: ${a.availability.hint ?? "not found"}`, 50),
      oneLine(a.effectiveModel ?? "-", 32),
    ]);
    this.out(table(["  NAME", "KIND", "ENABLED", "AVAILABLE", "MODEL"], rows));
  }

  private async showLogs(agent: string): Promise<void> {
    const recent = await request<JobList>(this.server, "GET", `/api/jobs?agent=${encodeURIComponent(agent)}&limit=10`);
    const [last] = recent.jobs;
    if (!last) {
      this.out(`${oneLine(agent, 80)} has run no job yet\n`);
      return;
    }
    const rows = recent.jobs.map((j) => [j.id, j.status.replace("_", " "), jobDuration(j), oneLine(j.prompt, 60)]);
    this.out(`${table(["JOB", "STATUS", "TOOK", "PROMPT"], rows)}\nthe last one, ${last.id}:\n`);
    await this.awaiting((signal) => followReadable(this.server, last.id, new ReadablePrinter(this.out), true, signal));
  }

  private async showStatus(): Promise<void> {
    const count = async (status: string) => (await request<JobList>(this.server, "GET", `/api/jobs?status=${status}&limit=1`)).total;
    const [running, queued, agents] = await Promise.all([count("running"), count("queued"), listAgents(this.server)]);
    const available = agents.filter((a) => a.enabled && a.availability.available).length;
    this.out(
      `Corral at ${this.server.url}: ${running} running, ${queued} queued; ${available} of ${agents.length} agents available; talking to ${this.active}` +
        `${this.launched.size ? `; ${this.launched.size} launched here still under way` : ""}\n`,
    );
  }

  private async cancelLaunched(): Promise<void> {
    if (!this.launched.size) {
      this.out("no job launched here is under way\n");
      return;
    }
    for (const id of [...this.launched]) {
      const job = await request<Job>(this.server, "POST", `/api/jobs/${id}/cancel`).catch((err: unknown) => err as Error);
      this.launched.delete(id);
      this.out(job instanceof Error ? `job ${id}: ${oneLine(job.message)}\n` : `job ${id} (${job.agent}): ${job.status}\n`);
    }
  }
}
