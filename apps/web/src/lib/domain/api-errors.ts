import type { ApiErrorCode, ApiErrorDetails, FieldIssue } from "@corral/shared";
import { formatUsd, formatWhen, plural } from "../format/format.js";

/** What the panel can offer next to an error, so the fix is one click away. */
export type ErrorAction =
  | { kind: "open-budget"; href: string }
  | { kind: "share-workdir"; jobId: string }
  | { kind: "enable-agent"; agent: string }
  | { kind: "disable-agent"; agent: string };

/** An error in the panel's words: where it belongs (a form field, or none) and the action that fixes it. */
export interface PanelError {
  field: string | null;
  text: string;
  action?: ErrorAction;
}

/** The parts of a refused API call the panel reads (an ApiRequestError has them all). */
export interface RefusedCall {
  message: string;
  code: ApiErrorCode | null;
  field: string | undefined;
  issues: FieldIssue[];
  details: ApiErrorDetails;
}

/** Where the Costs page shows one budget. */
export const budgetHref = (id: number) => `/costs#budget-${id}`;

/**
 * "google's daily budget of $1.00 is used up ($1.02 used today)": which provider, what it allows,
 * what its period has used, and when that period ends, as the API's own error says.
 */
function budgetRefusal(b: NonNullable<ApiErrorDetails["budget"]>, agent: string | undefined, now: number): string {
  const whose = `${b.provider}'s ${b.period === "day" ? "daily" : "monthly"} budget`;
  const period = b.period === "day" ? "today" : "this month";
  const resets = `it starts again ${formatWhen(b.periodEnd, now)}`;
  const by = agent ? ` (${agent} bills to ${b.provider})` : "";
  if (b.maxCostUsd !== null && b.usedCostUsd >= b.maxCostUsd) {
    return `${whose} of ${formatUsd(b.maxCostUsd)} is used up: ${formatUsd(b.usedCostUsd)} used ${period}${by}. Raise the budget, or wait: ${resets}.`;
  }
  if (b.maxTokens !== null && b.usedTokens >= b.maxTokens) {
    return `${whose} of ${plural(b.maxTokens, "token")} is used up: ${plural(b.usedTokens, "token")} used ${period}${by}. Raise the budget, or wait: ${resets}.`;
  }
  const left = b.maxCostUsd === null ? 0 : b.maxCostUsd - b.usedCostUsd;
  return `This job's cost limit is more than the ${formatUsd(left)} left ${period} in ${whose} of ${formatUsd(b.maxCostUsd ?? 0)}${by}. Lower the cost limit, raise the budget, or wait: ${resets}.`;
}

/**
 * The panel's words for a refusal, worded from its code: the server's text is written for REST
 * and MCP readers (it names endpoints and tool arguments), which a person in the panel cannot use.
 * A code the panel has no words for shows the server's text, which names the field.
 */
export function panelErrors(err: RefusedCall, now = Date.now()): PanelError[] {
  const { code, details } = err;
  if (code === "budget_exceeded" && details.budgetId !== undefined) {
    return [
      {
        field: null,
        text: details.budget
          ? budgetRefusal(details.budget, details.agent, now)
          : `The budget of ${details.agent ?? "this agent"}'s provider is used up: no job starts until it is raised or its period ends.`,
        action: { kind: "open-budget", href: budgetHref(details.budgetId) },
      },
    ];
  }
  if (code === "workdir_busy" && details.jobId) {
    return [
      {
        field: "workdir",
        // With several agents launched at once, `agent` says whose workdir (its folder of the one given).
        text: `Job ${details.jobId} is still using ${details.agent ? `${details.agent}'s workdir` : "this workdir"}. Choose another, wait for that job to end, or share the workdir with it.`,
        action: { kind: "share-workdir", jobId: details.jobId },
      },
    ];
  }
  if (code === "agent_disabled" && details.agent) {
    return [{ field: null, text: `${details.agent} is disabled, so it runs no jobs.`, action: { kind: "enable-agent", agent: details.agent } }];
  }
  if (code === "agent_not_deletable" && details.agent) {
    return [
      {
        field: null,
        // The panel offers Delete only for agents a user added, so history is what keeps one.
        text: `${details.agent} cannot be deleted while its jobs are in the history. Disable it instead: its tools go, its history stays.`,
        action: { kind: "disable-agent", agent: details.agent },
      },
    ];
  }
  if (code === "queue_full") return [{ field: null, text: "The job queue is full. Launch again once some jobs have ended." }];
  // Only a page opened with a job's inputs sends it (Edit and relaunch), so the job named was that page's.
  if (err.field === "relaunchOf") {
    return [
      {
        field: null,
        text: "The job these inputs were taken from does not exist, so this launch cannot be its relaunch. Open Launch afresh to start a new job.",
      },
    ];
  }
  if (err.issues.length) return err.issues.map((i) => ({ field: i.field.split(".")[0] ?? i.field, text: atEntry(i) }));
  return [{ field: err.field ?? null, text: err.message }];
}

/**
 * An issue's message, saying which entry of a list field it is about (`sessions.1`: "entry 2: …"),
 * since the form shows a list in one input, counted from 1 as a person counts.
 */
function atEntry(issue: FieldIssue): string {
  const index = issue.field.split(".")[1];
  return index !== undefined && /^\d+$/.test(index) ? `entry ${Number(index) + 1}: ${issue.message}` : issue.message;
}

/** Field → message, for a form; the first message wins where two name one field. */
export type FieldErrors = Record<string, string>;

export function fieldErrorsOf(issues: FieldIssue[]): FieldErrors {
  const out: FieldErrors = {};
  for (const i of issues) {
    const field = i.field.split(".")[0] ?? i.field;
    out[field] ??= i.message;
  }
  return out;
}
