import { isFinalStatus, type HubMessage, type Job } from "@corral/shared";
import type { ConversationsRepo, NewHubMessage } from "../db/repos/conversations.js";
import type { HubMessageRow } from "../db/schema.js";
import type { JobService } from "../jobs/service.js";
import { ServiceError } from "../lib/errors.js";
import type { HubMember } from "./hub.js";

/** An answer without a final text carries the end of the output instead, this long at most. */
const ANSWER_TAIL_CHARS = 20_000;

export interface RelayDeps {
  jobs: JobService;
  repo: ConversationsRepo;
  /** Stores a message with `alongside` in one transaction, then announces it. */
  post(row: NewHubMessage, alongside?: () => void): HubMessage;
}

/**
 * Messages to Corral's worker agents. Each becomes a job: the first message of a sender to a
 * worker starts one, each later one continues the last (`session`), so the worker keeps the
 * conversation. When the job ends, its answer (final text, or its error) is stored as a message
 * from the worker to the sender, carrying the job id. A message whose answer is owed is marked
 * in the registry, so a restart waits for its job again and the answer is never lost.
 */
export class WorkerRelay {
  /** Messages to workers by the job answering them. */
  private owed = new Map<string, HubMessageRow>();
  private readonly onJob = (job: Job) => {
    if (!isFinalStatus(job.status)) return;
    const sent = this.owed.get(job.id);
    if (sent) this.answer(sent, job);
  };

  constructor(private readonly deps: RelayDeps) {
    deps.jobs.on("job", this.onJob);
  }

  recover(): void {
    for (const sent of this.deps.repo.pendingAnswers()) {
      if (!sent.jobId) continue;
      const job = this.deps.jobs.find(sent.jobId);
      this.owed.set(sent.jobId, sent);
      if (!job || isFinalStatus(job.status)) this.answer(sent, job);
    }
  }

  close(): void {
    this.deps.jobs.off("job", this.onJob);
  }

  ask(from: HubMember, worker: string, text: string): HubMessage {
    const { jobs, repo } = this.deps;
    const previous = repo.lastJob(from.session, from.name, worker);
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
    const session = previous && jobs.hasConversation(previous) ? previous : undefined;
    const job = jobs.launch(worker, { prompt: text, session }, from.door, `conversation ${from.session}/${from.name}`);
    const at = Date.now();
    let message: HubMessage;
    try {
      message = this.deps.post({ session: from.session, from: from.name, to: worker, text, jobId: job.id, at, receivedAt: at, answerPending: true });
    } catch (err) {
      // Nobody would hear the answer of a job whose message was not stored.
      void jobs.cancel(job.id).catch(() => undefined);
      throw err;
    }
    this.owed.set(job.id, { ...message, receivedAt: at, answerPending: true });
    return message;
  }

  /**
   * Stores the worker's answer and marks the message answered, in one transaction. Called from
   * the job service's events: a failure stays here (the registry still owes the answer, and the
   * next start delivers it) and never reaches the job's runner.
   */
  private answer(sent: HubMessageRow, job: Job | undefined): void {
    if (sent.jobId) this.owed.delete(sent.jobId);
    try {
      this.deps.post(
        { session: sent.session, from: sent.to, to: sent.from, text: this.answerText(sent, job), jobId: sent.jobId, at: Date.now() },
        () => this.deps.repo.settleAnswer(sent.id),
      );
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
        tail = this.deps.jobs.outputTail(job, ANSWER_TAIL_CHARS).trim();
      } catch {
        // An unreadable log leaves the answer without its text; the job page still has it.
      }
      return tail || "(the worker finished without printing an answer)";
    }
    return `error: ${job.status.replace("_", " ")}${job.error ? `: ${job.error}` : ""}`;
  }
}
