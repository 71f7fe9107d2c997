import type { Registry } from "../db/registry.js";
import { answerRequest } from "./answer-request.js";
import type { WorkdirService } from "../workdirs/service.js";
import type { WorktreeAnswers } from "./worktree-answers.js";

/** Requests waiting to be answered at once; more are left for the next heartbeat's look (the server waits ~10 s at most anyway). */
const MAX_QUEUED = 64;

/**
 * A runner's answers to the server's browsing requests for workdirs on its machine: each request
 * (heard through NOTIFY, or found at a heartbeat when that was missed) is answered by the same
 * WorkdirService the server uses, on this machine's disk under this runner's roots, one at a
 * time and apart from job work (which never waits for it).
 */
export class BrowsingRequests {
  private readonly queued = new Set<string>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly runnerId: string,
    private readonly registry: Pick<Registry, "runnerRequests">,
    private readonly workdirs: WorkdirService,
    private readonly worktrees: WorktreeAnswers,
    private readonly onError: (what: string, err: unknown) => void,
  ) {}

  /** Request `id` was NOTIFYed (to every runner: it is answered only if it is addressed to this one). */
  heard(id: string): void {
    if (this.queued.has(id) || this.queued.size >= MAX_QUEUED) return;
    this.queued.add(id);
    this.chain = this.chain.then(async () => {
      try {
        await this.answer(id);
      } catch (err) {
        this.onError(`answering browsing request ${id}`, err);
      } finally {
        this.queued.delete(id);
      }
    });
  }

  /** Picks up requests for this runner whose NOTIFY was missed (its listening connection was down). */
  async catchUp(): Promise<void> {
    for (const row of await this.registry.runnerRequests.pending(this.runnerId)) this.heard(row.id);
  }

  /** Settles once the requests queued so far are answered. */
  settled(): Promise<void> {
    return this.chain;
  }

  private async answer(id: string): Promise<void> {
    const row = await this.registry.runnerRequests.get(id);
    // Gone: the server gave up waiting. Another runner's, or answered already: not this one's to answer.
    if (!row || row.runner !== this.runnerId || row.answeredAt !== null) return;
    const result = await answerRequest(this.workdirs, this.worktrees, row);
    await this.registry.runnerRequests.answer(id, { answeredAt: Date.now(), ...result });
  }
}
