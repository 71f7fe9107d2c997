import type { AuditAction, JobStatus } from "@corral/shared";
import type { Actor, AuditService } from "../audit/service.js";
import type { Registry } from "../db/registry.js";
import type { JobPatch } from "../db/registry.js";
import type { JobRow } from "../db/schema.js";
import { inUnit, type Unit } from "../db/unit.js";
import { SpaceReserve } from "../lib/disk-space.js";
import type { JobEvents, OutputEvent } from "./job-events.js";
import { toJob } from "./job-view.js";

/**
 * Every write of a job's state, then its announcement (JobEvents): nothing is told that is not
 * stored. Given a unit, a change is written in its transaction and told once that has committed.
 */
export class JobStore {
  /** Room kept in the data dir so that, with its disk full, jobs' ends and cancels are still stored. */
  readonly space: SpaceReserve;

  constructor(
    private readonly registry: Registry,
    private readonly auditLog: Pick<AuditService, "store" | "announce">,
    private readonly events: JobEvents,
    dataDir: string,
  ) {
    this.space = new SpaceReserve(dataDir);
  }

  /**
   * Runs `fn` in one transaction. What it announces (job changes, audit entries) is told once the
   * transaction has committed, and never if it rolled back: nothing is announced that is not stored.
   */
  atomically<T>(fn: (unit: Unit) => Promise<T>): Promise<T> {
    return this.space.write(() => inUnit(this.registry, fn));
  }

  async audit(unit: Unit, action: AuditAction, row: JobRow, actor: Actor): Promise<void> {
    const entry = await this.auditLog.store(unit.tx, action, row, actor);
    unit.afterCommit(() => this.auditLog.announce(entry));
  }

  /** Tells of a stored row: at once, or once `unit` has committed when it was written there. */
  announce(row: JobRow, unit?: Unit): JobRow {
    const job = toJob(row);
    if (unit) unit.afterCommit(() => this.events.emit("job", job));
    else this.events.emit("job", job);
    return row;
  }

  async update(id: string, patch: JobPatch, unit?: Unit): Promise<JobRow> {
    // In a unit, a full disk is the unit's to retry (see atomically).
    const row = await (unit ? unit.tx.jobs.update(id, patch) : this.space.write(() => this.registry.jobs.update(id, patch)));
    if (!row) throw new Error(`job ${id} vanished from the registry`);
    return this.announce(row, unit);
  }

  finish(id: string, patch: JobPatch & { status: JobStatus }, unit?: Unit): Promise<JobRow> {
    return this.update(id, { endedAt: Date.now(), ...patch }, unit);
  }

  /** Tells of output already appended to the job's log. */
  output(event: OutputEvent): void {
    this.events.emit("output", event);
  }
}
