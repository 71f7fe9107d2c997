import { isFinalStatus, type HubMessage, type Job, type JobOrigin } from "@corral/shared";
import type { NewHubMessage } from "../db/registry.js";
import type { Registry } from "../db/registry.js";
import { inUnit, type Unit } from "../db/unit.js";
import type { HubMessageRow } from "../db/schema.js";
import type { JobParts } from "../jobs/parts.js";
import { ServiceError } from "../lib/errors.js";
import type { HubMember } from "./hub-member.js";

/** An answer without a final text carries the end of the output instead, this long at most. */
const ANSWER_TAIL_CHARS = 20_000;

export interface RelayDeps extends Pick<JobParts, "jobs" | "launches" | "output" | "jobEvents"> {
  registry: Registry;
  /** Stores a message in the unit's transaction; it is announced once that has committed. */
  store(unit: Unit, row: NewHubMessage): Promise<HubMessage>;
}

/**
 * Messages to Corral's worker agents. Each becomes a job: the first message of a sender to a
 * worker starts one, each later one continues the last (`session`), so the worker keeps the
 * conversation. The chain is the hub session's and the sender's (`lastJob` reads that session's
 * messages only): two sessions never continue each other's conversation with a worker, even
 * under the same sender's name. When the job ends, its answer (final text, or its error) is
 * stored as a message from the worker to the sender, carrying the job id. A message whose answer
 * is owed is marked in the registry, so a restart waits for its job again and the answer is never
 * lost.
 */
export class WorkerRelay {
  /** Messages to workers by the job answering them. */
  private owed = new Map<string, HubMessageRow>();
  private readonly onJob = (job: Job) => {
    if (!isFinalStatus(job.status)) return;
    const sent = this.owed.get(job.id);
    if (sent) void this.answer(sent, job);
  };

  constructor(private readonly deps: RelayDeps) {
    deps.jobEvents.on("job", this.onJob);
  }

  async recover(): Promise<void> {
    for (const sent of await this.deps.registry.conversations.pendingAnswers()) {
      if (!sent.jobId) continue;
      const job = await this.deps.jobs.find(sent.jobId);
      this.owed.set(sent.jobId, sent);
      if (!job || isFinalStatus(job.status)) await this.answer(sent, job);
    }
  }

  close(): void {
    this.deps.jobEvents.off("job", this.onJob);
  }

  /**
   * The job and its message are stored in one transaction (nobody would hear the answer of a job
   * whose message was not stored), and the answer is owed before the job can start, let alone end.
   */
  ask(from: HubMember, worker: string, text: string, door: Exclude<JobOrigin, "panel">): Promise<HubMessage> {
    const { launches } = this.deps;
    return inUnit(this.deps.registry, async (unit) => {
      const previous = await unit.tx.conversations.lastJob(from.session, from.name, worker);
      if (previous && this.owed.has(previous)) {
        throw new ServiceError(
          `${worker} is still answering your previous message (job ${previous}); receive its answer first (corral_receive), then send again`,
          409,
          "to",
          undefined,
          "conflict",
          { jobId: previous },
        );
      }
      // The pair's conversation goes on where the worker has one; a worker that kept none answers afresh.
      const session = previous && (await launches.hasConversation(previous, unit.tx)) ? previous : undefined;
      const job = await launches.launch(worker, { prompt: text, session }, door, `conversation ${from.session}/${from.name}`, unit);
      const at = Date.now();
      const message = await this.deps.store(unit, {
        session: from.session,
        from: from.name,
        to: worker,
        text,
        jobId: job.id,
        at,
        receivedAt: at,
        answerPending: true,
      });
      this.owed.set(job.id, { ...message, receivedAt: at, answerPending: true });
      unit.afterRollback(() => this.owed.delete(job.id));
      return message;
    });
  }

  /**
   * Stores the worker's answer and marks the message answered, in one transaction. Called from
   * the job events (JobEvents): a failure stays here (the registry still owes the answer, and the
   * next start delivers it) and never reaches the job's driver.
   */
  private async answer(sent: HubMessageRow, job: Job | undefined): Promise<void> {
    if (sent.jobId) this.owed.delete(sent.jobId);
    try {
      const text = this.answerText(sent, job);
      await inUnit(this.deps.registry, async (unit) => {
        await this.deps.store(unit, { session: sent.session, from: sent.to, to: sent.from, text, jobId: sent.jobId, at: Date.now() });
        await unit.tx.conversations.settleAnswer(sent.id);
      });
    } catch {
      // Left owed: the registry keeps answer_pending, so the next start answers it.
    }
  }

  private answerText(sent: HubMessageRow, job: Job | undefined): string {
    if (!job) return `error: job ${sent.jobId} is no longer in the registry`;
    if (job.status === "succeeded") {
      if (job.finalText) return job.finalText;
      let tail = "";
      try {
        tail = this.deps.output.outputTail(job, ANSWER_TAIL_CHARS).trim();
      } catch {
        // An unreadable log leaves the answer without its text; the job page still has it.
      }
      return tail || "(the worker finished without printing an answer)";
    }
    return `error: ${job.status.replace("_", " ")}${job.error ? `: ${job.error}` : ""}`;
  }
}
