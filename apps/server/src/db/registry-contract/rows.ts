// Rows the contract tests store: an agent, and jobs of it as a launch stores them.
import type { NewAgentRow } from "../registry.js";
import type { NewJobRow } from "../registry.js";
import type { TestRegistry } from "./dialects.js";

export const agentRow = (name: string, more: Partial<NewAgentRow> = {}): NewAgentRow => ({
  name,
  kind: "command",
  provider: "local",
  workdir: "/tmp",
  timeoutS: 60,
  maxConcurrent: 1,
  env: {},
  enabled: true,
  builtin: false,
  createdAt: 0,
  updatedAt: 0,
  ...more,
});

export const jobRow = (id: string, more: Partial<NewJobRow> = {}): NewJobRow => ({
  id,
  agent: "worker",
  status: "succeeded",
  prompt: "p",
  workdir: "/tmp",
  timeoutS: 60,
  origin: "rest",
  createdAt: 0,
  ...more,
});

/** Stores the agents the jobs name, then the jobs, in the order given. */
export async function addJobs(registry: TestRegistry, rows: NewJobRow[]): Promise<void> {
  await registry.agents.insertMissing([...new Set(rows.map((r) => r.agent))].map((name) => agentRow(name)));
  await registry.insertJobs(rows);
}
