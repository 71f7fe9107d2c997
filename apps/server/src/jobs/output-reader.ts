import { isFinalStatus, type Job, type OutputPage, type OutputStream, type ReadablePage } from "@corral/shared";
import { agentKindModule } from "../agents/kind-lookup.js";
import type { Registry } from "../db/registry.js";
import { ServiceError } from "../lib/errors.js";
import { type ByteChunk, CursorError, type OutputRecords, readOutputBytes, tailText } from "./output-log.js";
import type { JobQueries } from "./queries.js";
import { lastReadableLine, readReadable } from "./readable-output.js";
import type { RemoteJobs } from "./remote/remote-jobs.js";
import { jobDataPaths } from "./worker-process.js";

/** Reads of a job's output log for every door: pages from a cursor, the Readable view, the tail. */
export class OutputReader {
  constructor(
    private readonly registry: Pick<Registry, "agents">,
    private readonly dataDir: string,
    private readonly jobs: Pick<JobQueries, "get">,
    private readonly remote: Pick<RemoteJobs, "caughtUp">,
  ) {}

  /**
   * Before a stream reads the log by chunks (outputFrom): a runner's job gets what its runner
   * stored and this server has not copied yet (while it was down: no NOTIFY will bring it).
   */
  caughtUp(job: Job): Promise<void> {
    return this.remote.caughtUp(job);
  }

  async readOutput(id: string, cursor: number, limit: number): Promise<OutputPage> {
    const job = await this.jobs.get(id);
    await this.remote.caughtUp(job);
    const page = this.outputFrom(id, cursor, limit);
    const chunks = page.chunks.map(({ stream, data }) => ({ stream, text: data.toString("utf8") }));
    return { chunks, cursor: page.cursor, complete: isFinalStatus(job.status) && page.cursor >= page.size };
  }

  /**
   * The one read of a job's output log that every door goes through (REST and MCP by pages, the
   * WebSocket by chunks it can resume after): whole records from `cursor`, about `limit` bytes of
   * text, each chunk as UTF-8 with the cursor after it. A cursor this server never handed out answers 400.
   */
  outputFrom(id: string, cursor: number, limit: number): OutputRecords<ByteChunk> {
    return atCursor(() => readOutputBytes(this.logFile(id), cursor, limit));
  }

  /** The output as its agent kind reads it (see readReadable), for the panel's Readable view. */
  async readReadable(id: string, cursor: number, limit: number): Promise<ReadablePage> {
    const job = await this.jobs.get(id);
    await this.remote.caughtUp(job);
    const kind = (await this.registry.agents.get(job.agent))?.kind;
    return atCursor(() => readReadable(this.logFile(id), kind ? agentKindModule(kind) : undefined, cursor, limit, isFinalStatus(job.status)));
  }

  /** The latest line the Readable view shows (see lastReadableLine), for the panel's Running-now cards. */
  async readableLine(job: Job): Promise<string> {
    const kind = (await this.registry.agents.get(job.agent))?.kind;
    return lastReadableLine(this.logFile(job.id), kind ? agentKindModule(kind) : undefined, isFinalStatus(job.status));
  }

  /** The output's end, of a job just read (every `_done` reads its tail). */
  outputTail(job: Job, maxChars: number, streams?: OutputStream[]): string {
    return tailText(this.logFile(job.id), maxChars, streams);
  }

  private logFile(id: string): string {
    return jobDataPaths(this.dataDir, id).log;
  }
}

/** Runs a read from a caller's cursor; a cursor the log does not have is the caller's error. */
function atCursor<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof CursorError) throw new ServiceError(err.message, 400, "cursor");
    throw err;
  }
}
