import {
  type ConfigFileStatus,
  type HubAgent,
  isFinalStatus,
  parseServerMessage,
  type ClientMessage,
  type JobFile,
  type JobFiles,
  type JobList,
  type JobStatus,
  type ServerMessage,
} from "@corral/shared";
import type { QueryClient } from "@tanstack/react-query";
import { writeJobToCache } from "./job-cache.js";
import { mergeJobFiles } from "../domain/job-files.js";
import { appendMessage, emptyTimeline, type Timeline } from "../domain/conversation-timeline.js";
import { appendStreamed, emptyOutput, type OutputBuffer } from "../domain/output-buffer.js";
import { queryKeys } from "./query-keys.js";

/**
 * The panel's one WebSocket. It follows the job list and the config file's state always, a job's stream while a page
 * shows that job and a conversation while a page shows it, writing everything into the query
 * cache; pages only read the cache. On a
 * drop it reconnects and resumes each job from the cursor the cache holds, so nothing is lost
 * or doubled; while it is down, the queries poll REST instead.
 */
export class LiveClient {
  private socket: WebSocket | null = null;
  private follows = new Map<string, number>();
  /** Conversation sessions followed, by how many components follow each. */
  private conversations = new Map<string, number>();
  private sessionsTimer: ReturnType<typeof setTimeout> | null = null;
  private retryMs = 500;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  /** Jobs whose replay has reached the live edge on this connection. */
  private caughtUp = new Set<string>();
  private openedBefore = false;

  constructor(
    private readonly client: QueryClient,
    private readonly url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/ws`,
  ) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    if (this.sessionsTimer) clearTimeout(this.sessionsTimer);
    this.socket?.close();
    this.socket = null;
    this.setLive(false);
  }

  /** Streams a job's output, files and status into the cache until the returned function is called. */
  follow(jobId: string): () => void {
    const count = this.follows.get(jobId) ?? 0;
    this.follows.set(jobId, count + 1);
    if (count === 0) void this.subscribeJob(jobId);
    return () => {
      const left = (this.follows.get(jobId) ?? 1) - 1;
      if (left > 0) {
        this.follows.set(jobId, left);
        return;
      }
      this.follows.delete(jobId);
      this.send({ type: "unsubscribe_job", jobId });
    };
  }

  /** Streams a conversation session's messages and agents into the cache until the returned function is called. */
  followConversation(session: string): () => void {
    const count = this.conversations.get(session) ?? 0;
    this.conversations.set(session, count + 1);
    if (count === 0) this.subscribeConversation(session);
    return () => {
      const left = (this.conversations.get(session) ?? 1) - 1;
      if (left > 0) {
        this.conversations.set(session, left);
        return;
      }
      this.conversations.delete(session);
      this.send({ type: "unsubscribe_conversation", session });
    };
  }

  private subscribeConversation(session: string): void {
    const held = this.client.getQueryData<Timeline>(queryKeys.conversations.messages(session));
    this.send({ type: "subscribe_conversation", session, cursor: held?.cursor ?? 0 });
  }

  /** Counts on the sessions list change with messages and agents; one REST read covers a burst. */
  private refreshSessions(): void {
    if (this.sessionsTimer) return;
    this.sessionsTimer = setTimeout(() => {
      this.sessionsTimer = null;
      void this.client.invalidateQueries({ queryKey: queryKeys.conversations.sessions() });
    }, 500);
  }

  private connect(): void {
    if (this.stopped) return;
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.retryMs = 500;
      this.setLive(true);
      this.send({ type: "subscribe_jobs" });
      this.send({ type: "subscribe_config_file" });
      for (const jobId of this.follows.keys()) void this.subscribeJob(jobId);
      for (const session of this.conversations.keys()) this.subscribeConversation(session);
      // Whatever changed while disconnected is read once over REST: the jobs, and after a drop
      // everything else too (the server may have been away, and reads that failed then, such as
      // the agents a job page needs, are not retried by themselves).
      void this.client.invalidateQueries(this.openedBefore ? undefined : { queryKey: queryKeys.jobs.all });
      this.openedBefore = true;
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") return;
      let message: ServerMessage;
      try {
        message = parseServerMessage(event.data);
      } catch {
        return;
      }
      this.handle(message);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.caughtUp.clear();
      this.socket = null;
      this.setLive(false);
      this.scheduleRetry();
    };
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  private setLive(live: boolean): void {
    this.client.setQueryData(queryKeys.live, live);
  }

  private send(message: ClientMessage): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private async subscribeJob(jobId: string): Promise<void> {
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    // A REST read in flight would race the replay; stop it and resume from what the cache holds.
    await this.client.cancelQueries({ queryKey: queryKeys.jobs.output(jobId) });
    const held = this.client.getQueryData<OutputBuffer>(queryKeys.jobs.output(jobId));
    this.caughtUp.delete(jobId);
    this.send({ type: "subscribe_job", jobId, cursor: held?.cursor ?? 0 });
  }

  /** New jobs and jobs leaving the running set change list pages; one REST refresh covers a burst. */
  private refreshLists(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.client.invalidateQueries({ queryKey: queryKeys.jobs.lists() });
      void this.client.invalidateQueries({ queryKey: queryKeys.jobs.active() });
    }, 300);
  }

  /** Output is written before the status that ends a job, so once live and final the stream is whole. */
  private markComplete(jobId: string): void {
    this.client.setQueryData<OutputBuffer>(queryKeys.jobs.output(jobId), (b) => ({ ...(b ?? emptyOutput()), complete: true }));
  }

  private handle(message: ServerMessage): void {
    const { client } = this;
    switch (message.type) {
      case "job": {
        const before = client.getQueryData<{ status: string }>(queryKeys.jobs.detail(message.job.id));
        writeJobToCache(client, message.job);
        const active = client.getQueryData<JobList>(queryKeys.jobs.active());
        if (!before || before.status !== message.job.status || !active?.jobs.some((j) => j.id === message.job.id)) this.refreshLists();
        break;
      }
      case "status": {
        writeJobToCache(client, message.job);
        if (isFinalStatus(message.job.status)) {
          if (this.caughtUp.has(message.jobId)) this.markComplete(message.jobId);
          // A list cut while the job ran says so in what the server answers, not in file events.
          void client.invalidateQueries({ queryKey: queryKeys.jobs.files(message.jobId) });
          void client.invalidateQueries({ queryKey: queryKeys.costs.all });
        }
        break;
      }
      case "caught_up": {
        this.caughtUp.add(message.jobId);
        const job = client.getQueryData<{ status: JobStatus }>(queryKeys.jobs.detail(message.jobId));
        if (job && isFinalStatus(job.status)) this.markComplete(message.jobId);
        break;
      }
      case "output":
        client.setQueryData<OutputBuffer>(queryKeys.jobs.output(message.jobId), (b) =>
          appendStreamed(b ?? emptyOutput(), { stream: message.stream, text: message.text }, message.cursor),
        );
        break;
      case "files":
      case "file": {
        const incoming: JobFile[] = message.type === "files" ? message.files : [message.file];
        client.setQueryData<JobFiles>(queryKeys.jobs.files(message.jobId), (held) => ({
          cutAt: held?.cutAt ?? null,
          files: mergeJobFiles(held?.files ?? [], incoming),
        }));
        void client.invalidateQueries({ queryKey: queryKeys.files.all });
        break;
      }
      case "usage":
        client.setQueryData<{ usage: unknown }>(queryKeys.jobs.detail(message.jobId), (job) => (job ? { ...job, usage: message.usage } : job));
        break;
      case "conversation_message":
        client.setQueryData<Timeline>(queryKeys.conversations.messages(message.message.session), (t) =>
          appendMessage(t ?? emptyTimeline(), message.message),
        );
        this.refreshSessions();
        break;
      case "conversation_agents":
        client.setQueryData<HubAgent[]>(queryKeys.conversations.agents(message.session), message.agents);
        this.refreshSessions();
        break;
      case "config_file":
        client.setQueryData<ConfigFileStatus>(queryKeys.configFile, message.status);
        break;
      case "subscribed":
      case "error":
        break;
    }
  }
}
