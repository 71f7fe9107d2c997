import { CostGroupKeySchema, CostQuerySchema, formatUsd, localDay, type Budget, type CostGroup, type CostTotals } from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/server";
import { defineTool } from "./define.js";
import { z } from "zod";
import { localTime } from "../../costs/periods.js";
import { parseInput } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { guarded, textResult } from "./results.js";
import { READS } from "./annotations.js";

const CorralCostsInput = z.object({
  days: z.number().int().min(1).max(3660).optional().describe("The last N days (default 30)"),
  from: z.string().max(20).optional().describe("First day, YYYY-MM-DD"),
  to: z.string().max(20).optional().describe("Last day"),
  group_by: z.array(CostGroupKeySchema).max(4).optional().describe("Default [provider]"),
  provider: z.string().min(1).max(100).optional().describe("Only this provider"),
  agent: z.string().min(1).max(40).optional().describe("Only this agent"),
});

const count = (n: number) => n.toLocaleString("en-US");

/** One line of money and tokens; unpriced work says so instead of passing for $0. */
function totalsText(t: CostTotals): string {
  const parts = [`${t.jobs} job(s)`, `${count(t.inputTokens)} in / ${count(t.outputTokens)} out tokens`];
  if (t.cachedInputTokens) parts.push(`${count(t.cachedInputTokens)} cached`);
  if (t.costUsd !== null) {
    const how = [t.reportedUsd ? `${formatUsd(t.reportedUsd)} reported` : "", t.estimatedUsd ? `${formatUsd(t.estimatedUsd)} estimated` : ""].filter(
      Boolean,
    );
    parts.push(`${formatUsd(t.costUsd)}${how.length ? ` (${how.join(", ")})` : ""}`);
  }
  if (t.unpricedJobs) {
    parts.push(`UNPRICED: ${t.unpricedJobs} job(s), ${count(t.unpricedInputTokens)} in / ${count(t.unpricedOutputTokens)} out tokens with no price`);
  }
  if (t.noUsageJobs) parts.push(`${t.noUsageJobs} without usage`);
  return parts.join(" · ");
}

function groupName(g: CostGroup, keys: string[]): string {
  return keys.map((k) => (g as Record<string, unknown>)[k] ?? "(none)").join(" · ");
}

function budgetText(b: Budget): string {
  const limits = [
    b.maxCostUsd !== null ? `${formatUsd(b.usedCostUsd)} of ${formatUsd(b.maxCostUsd)}` : "",
    b.maxTokens !== null ? `${count(b.usedTokens)} of ${count(b.maxTokens)} tokens` : "",
  ].filter(Boolean);
  const state = b.exceeded ? "EXCEEDED: new jobs are refused" : "ok";
  return `budget ${b.id}: ${b.provider} per ${b.period} · ${limits.join(" · ")} · ${state} (until ${localTime(b.periodEnd)})`;
}

/** `corral_costs`: what delegating cost, per provider, model, agent or day, and the budgets. */
export function registerCostTools(server: McpServer, services: Services): void {
  defineTool(
    server,
    "corral_costs",
    {
      title: "Costs",
      annotations: READS,
      description: "Tokens and USD spent per provider, model, agent or day, and the budgets.",
      input: CorralCostsInput,
    },
    ({ days, from, to, group_by, provider, agent }) =>
      guarded(async () => {
        const start = from ?? (days ? localDay(Date.now() - (days - 1) * 24 * 3600 * 1000) : undefined);
        const query = parseInput(CostQuerySchema, {
          ...(start ? { from: start } : {}),
          ...(to ? { to } : {}),
          ...(group_by?.length ? { groupBy: group_by.join(",") } : {}),
          ...(provider ? { provider } : {}),
          ...(agent ? { agent } : {}),
        });
        const report = await services.costs.report(query);
        const lines = [
          `costs from ${localTime(report.from)} to ${localTime(report.to)}, by ${report.groupBy.join(", ")}`,
          ...report.groups.map((g) => `${groupName(g, report.groupBy)}: ${totalsText(g)}`),
          `total: ${totalsText(report.totals)}`,
          ...(await services.costs.budgets()).map(budgetText),
        ];
        if (report.totals.unpricedJobs) lines.push("set a price with PUT /api/costs/prices {provider, model, inputPerM, outputPerM}");
        return textResult(lines.join("\n"));
      }),
  );
}
