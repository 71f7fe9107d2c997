import { z } from "zod";
import { OutputStreamSchema } from "./enums.js";
import { costText, plural } from "./format.js";

/**
 * What the panel's Readable view shows of a job's output. The server turns each line a worker
 * printed into these events, once, with its agent kind's reader; the panel only renders them.
 */

/**
 * Bounds for what one event may put on screen; the raw view still has everything. An answer is
 * not cut: the panel shows it as lines of at most READABLE_MAX_TEXT characters each.
 */
export const READABLE_MAX_TEXT = 2000;
export const READABLE_MAX_SHORT = 160;

const UsageSummarySchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  costUsd: z.number().optional(),
  durationMs: z.number().optional(),
  /** Further facts in short ("2 turns", "1 tool call"), counted with `plural`. */
  extra: z.array(z.string()).default([]),
});
export type UsageSummary = z.infer<typeof UsageSummarySchema>;

export const ReadableEventSchema = z.discriminatedUnion("type", [
  /** A line that is not one of the worker's events (stderr, Corral's notes, plain text), as printed. */
  z.object({ type: z.literal("output"), stream: OutputStreamSchema, text: z.string() }),
  z.object({ type: z.literal("session"), model: z.string().optional(), tools: z.number().optional() }),
  /** Something the worker reports about itself (a system event other than its start). */
  z.object({ type: z.literal("note"), text: z.string() }),
  /** The prompt (or a tool's answer) as the model was given it. */
  z.object({ type: z.literal("prompt"), text: z.string() }),
  /** The answer; `delta` pieces of one answer follow each other and continue its last line. */
  z.object({ type: z.literal("text"), text: z.string(), delta: z.boolean().optional() }),
  z.object({ type: z.literal("thinking"), text: z.string() }),
  /** A tool call with its most telling argument (a file, a command, a pattern). */
  z.object({ type: z.literal("tool_call"), name: z.string(), args: z.string() }),
  z.object({ type: z.literal("tool_result"), ok: z.boolean(), detail: z.string() }),
  /** Tokens, cost and time of the whole job, one turn, or one step. */
  z.object({ type: z.literal("usage"), scope: z.enum(["job", "turn", "step"]), usage: UsageSummarySchema }),
  z.object({ type: z.literal("error"), message: z.string(), usage: UsageSummarySchema.optional() }),
]);
export type ReadableEvent = z.infer<typeof ReadableEventSchema>;

/** Readable events from `cursor` on; `cursor` is where the next read starts (never inside a line). */
export const ReadablePageSchema = z.object({
  events: z.array(ReadableEventSchema),
  cursor: z.number().int(),
  /** True when the job has ended and the page reaches the end of its output. */
  complete: z.boolean(),
});
export type ReadablePage = z.infer<typeof ReadablePageSchema>;

const count = (n: number) => n.toLocaleString("en-US");

function summary(u: UsageSummary): string {
  const bits: string[] = [];
  if (u.inputTokens !== undefined || u.outputTokens !== undefined) bits.push(`${count(u.inputTokens ?? 0)} in / ${count(u.outputTokens ?? 0)} out`);
  // Costs a worker reported itself, in the words every view uses: a $0 for tokens used is no price.
  if (u.costUsd !== undefined) bits.push(costText(u.costUsd, { tokens: (u.inputTokens ?? 0) + (u.outputTokens ?? 0), source: "reported" }));
  if (u.durationMs !== undefined) bits.push(`${(u.durationMs / 1000).toFixed(1)} s`);
  bits.push(...u.extra);
  return bits.join(" · ");
}

const scopes = { job: "✓ done", turn: "✓ turn done", step: "· step done" } as const;

/** The one line an event reads as, without colours (the panel adds them by `type`). */
export function readableText(event: ReadableEvent): string {
  switch (event.type) {
    case "output":
    case "text":
      return event.text;
    case "session":
      return ["· session started", event.model, event.tools !== undefined ? plural(event.tools, "tool") : undefined].filter(Boolean).join(" · ");
    case "note":
      return `· ${event.text}`;
    case "prompt":
      return `› ${event.text}`;
    case "thinking":
      return `∴ ${event.text}`;
    case "tool_call":
      return `→ ${event.name}${event.args ? ` ${event.args}` : ""}`;
    case "tool_result":
      return event.ok ? `← ok${event.detail ? ` ${event.detail}` : ""}` : `← error${event.detail ? `: ${event.detail}` : ""}`;
    case "usage": {
      const s = summary(event.usage);
      return `${scopes[event.scope]}${s ? ` · ${s}` : ""}`;
    }
    case "error": {
      const s = event.usage ? summary(event.usage) : "";
      return `✗ ${event.message}${s ? ` · ${s}` : ""}`;
    }
  }
}
