// Jobs through REST and the WebSocket instead of MCP: `POST /api/jobs` launches, the job list
// subscription (`subscribe_jobs`) says when a job's end is stored. One HTTP request and one pushed
// message per job, so a job's own cost shows without any MCP call in the figure.
import type { RunningServer } from "./server.js";
import { WebSocket } from "./ws.js";

interface EndedJob {
  id: string;
  status: string;
  error: string | null;
  createdAt: number;
  endedAt: number | null;
}

const FINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "lost", "budget_exceeded"]);

export class RestJobs {
  /** Ends announced before their launch answered are kept until asked for. */
  private ended = new Map<string, EndedJob>();
  private waiting = new Map<string, (job: EndedJob) => void>();

  private constructor(
    private readonly server: RunningServer,
    private readonly ws: InstanceType<typeof WebSocket>,
  ) {
    ws.on("message", (data) => {
      const msg = JSON.parse(data.toString()) as { type: string; job?: EndedJob };
      if (msg.type !== "job" || !msg.job || !FINAL.has(msg.job.status)) return;
      const resolve = this.waiting.get(msg.job.id);
      if (resolve) {
        this.waiting.delete(msg.job.id);
        resolve(msg.job);
      } else this.ended.set(msg.job.id, msg.job);
    });
  }

  static async connect(server: RunningServer): Promise<RestJobs> {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/ws`, { headers: { authorization: `Bearer ${server.token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const jobs = new RestJobs(server, ws);
    await new Promise<void>((resolve) => {
      ws.on("message", (data) => {
        if ((JSON.parse(data.toString()) as { type: string }).type === "subscribed") resolve();
      });
      ws.send(JSON.stringify({ type: "subscribe_jobs" }));
    });
    return jobs;
  }

  /** Launches a job and resolves once its end is stored and announced; a job that did not succeed throws. */
  async run(agent: string, prompt: string, workdir: string): Promise<EndedJob> {
    return this.end(await this.launch(agent, prompt, workdir));
  }

  /** Launches a job: its id, once stored. */
  async launch(agent: string, prompt: string, workdir: string): Promise<string> {
    const res = await fetch(`${this.server.url}/api/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ agent, prompt, workdir }),
    });
    if (res.status !== 201) throw new Error(`launch: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  /** Resolves once job `id` (launched by this client) has ended; a job that did not succeed throws. */
  async end(id: string): Promise<EndedJob> {
    const early = this.ended.get(id);
    this.ended.delete(id);
    const job = early ?? (await new Promise<EndedJob>((resolve) => this.waiting.set(id, resolve)));
    if (job.status !== "succeeded") throw new Error(`job ${id} ${job.status}: ${job.error}`);
    return job;
  }

  close(): void {
    this.ws.close();
  }
}
