import { ServiceError } from "../lib/errors.js";

/** How long a queue waits before trying again when its agent's limit could not be read. */
const RETRY_PUMP_MS = 1000;

/**
 * Per-agent FIFO queues with a concurrency limit each. It only decides when a job may start;
 * the job driver (JobDriver) starts it and reports back when it ended.
 */
export class Scheduler {
  private queues = new Map<string, string[]>();
  private running = new Map<string, number>();
  private total = 0;
  /** Room held for launches being stored; they are queued once stored, or give it back. */
  private reserved = 0;
  /** Agents whose queue will be pumped again after a pause. */
  private readonly retrying = new Set<string>();
  private closed = false;

  constructor(
    private readonly limitOf: (agent: string) => Promise<number>,
    private readonly start: (agent: string, jobId: string) => void,
    private readonly queueLimit: number,
  ) {}

  /** Holds room for `count` more jobs while they are stored; refuses, before anything is stored, when they do not fit. */
  reserve(count: number): void {
    const waiting = this.total + this.reserved;
    if (waiting + count > this.queueLimit) {
      throw new ServiceError(
        `the job queue is full (${this.queueLimit} at most, ${waiting} waiting${count > 1 ? `, ${count} more asked for` : ""}); wait for jobs to finish or raise CORRAL_QUEUE_LIMIT`,
        429,
        undefined,
        undefined,
        "queue_full",
      );
    }
    this.reserved += count;
  }

  /** The launch holding room was not stored. */
  unreserve(count: number): void {
    this.reserved -= count;
  }

  /** `reserved`: the job takes the room its launch held. */
  enqueue(agent: string, jobId: string, reserved = false): void {
    if (reserved) this.reserved--;
    const queue = this.queues.get(agent) ?? [];
    queue.push(jobId);
    this.queues.set(agent, queue);
    this.total++;
    this.pump(agent);
  }

  /**
   * A job whose room was counted where its agent's limit holds across processes (a runner's claim,
   * in the registry's transaction): it starts at once, without reading the limit again, unless
   * jobs of its agent already wait here (held by a limit lowered since their claims), or this
   * process runs as many of its agent's jobs as `room` (the limit here as the claim counted it)
   * allows: workers the registry no longer counts run here (a job declared lost while this runner
   * was silent runs on until its worker ends). It then waits behind them, its limit read as it is pumped.
   */
  startCounted(agent: string, jobId: string, room: number): void {
    if (this.queues.get(agent)?.length || (this.running.get(agent) ?? 0) >= room) {
      this.enqueue(agent, jobId);
      return;
    }
    this.running.set(agent, (this.running.get(agent) ?? 0) + 1);
    this.start(agent, jobId);
  }

  /** Whether the job waits in its agent's queue here. */
  holds(agent: string, jobId: string): boolean {
    return this.queues.get(agent)?.includes(jobId) ?? false;
  }

  /** Takes a job out of its queue (cancelled before it started). */
  remove(agent: string, jobId: string): boolean {
    const queue = this.queues.get(agent);
    const i = queue?.indexOf(jobId) ?? -1;
    if (!queue || i < 0) return false;
    queue.splice(i, 1);
    this.total--;
    return true;
  }

  /**
   * A job that could not start for now (the registry unreachable) goes back to the head of its
   * queue and gives back its slot; the queue tries again after a pause.
   */
  startLater(agent: string, jobId: string): void {
    const queue = this.queues.get(agent) ?? [];
    queue.unshift(jobId);
    this.queues.set(agent, queue);
    this.total++;
    this.running.set(agent, Math.max(0, (this.running.get(agent) ?? 1) - 1));
    this.pumpLater(agent);
  }

  /** A job already running when the server started counts against its agent's limit. */
  adopt(agent: string): void {
    this.running.set(agent, (this.running.get(agent) ?? 0) + 1);
  }

  released(agent: string): void {
    this.running.set(agent, Math.max(0, (this.running.get(agent) ?? 1) - 1));
    this.pump(agent);
  }

  /**
   * Starts waiting jobs while the agent is under its limit (call again when the limit changes).
   * The limit is read first; counting and starting then happen without a pause, so two pumps at
   * once never start more than it allows. A limit that cannot be read (the registry closing or
   * unreachable) leaves the jobs waiting, and the queue tries again after a pause.
   */
  pump(agent: string): void {
    if (!this.queues.get(agent)?.length) return;
    this.limitOf(agent).then(
      (limit) => {
        const queue = this.queues.get(agent);
        while (queue?.length && (this.running.get(agent) ?? 0) < limit) {
          const jobId = queue.shift() as string;
          this.total--;
          this.running.set(agent, (this.running.get(agent) ?? 0) + 1);
          this.start(agent, jobId);
        }
      },
      () => this.pumpLater(agent),
    );
  }

  /** Pumps every agent's queue: limits may have changed, and which ones is not known. */
  pumpAll(): void {
    for (const agent of this.queues.keys()) this.pump(agent);
  }

  /** Pumps the agent's queue after a pause, once however often it is asked meanwhile. */
  private pumpLater(agent: string): void {
    if (this.closed || this.retrying.has(agent)) return;
    this.retrying.add(agent);
    setTimeout(() => {
      this.retrying.delete(agent);
      this.pump(agent);
    }, RETRY_PUMP_MS).unref();
  }

  /** No more pumps after a pause (the service is shutting down). */
  close(): void {
    this.closed = true;
  }

  runningCount(agent: string): number {
    return this.running.get(agent) ?? 0;
  }

  queuedCount(): number {
    return this.total;
  }
}
