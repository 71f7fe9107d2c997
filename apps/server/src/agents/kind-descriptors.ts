import type { AgentFieldName, AgentKindDescriptor } from "@corral/shared";
import { agentKindModules } from "./kinds/index.js";
import { agentKindModule } from "./kind-lookup.js";

/** Every kind as the panel reads it (`GET /api/agent-kinds`): its form, its Add dialog, what it can do. */
export function agentKindDescriptors(): AgentKindDescriptor[] {
  return agentKindModules.map((m) => ({ kind: m.kind, adding: m.adding ?? null, fields: [...m.fields], ollamaModels: m.ollamaModels === true }));
}

/** What leaves a required field empty, whatever its input: nothing, "", or an empty list. */
const isEmpty = (value: unknown) => value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0);

/** The first field its kind declares required that `settingOf` leaves empty, and why the kind needs it; null when none is. */
export function missingRequiredField(kind: string, settingOf: (field: AgentFieldName) => unknown): { field: AgentFieldName; message: string } | null {
  for (const field of agentKindModule(kind)?.fields ?? []) {
    if (field.required !== null && isEmpty(settingOf(field.name))) return { field: field.name, message: field.required };
  }
  return null;
}

/**
 * Fields only some kinds apply: the model's role and tools, and the tool loop's limits. On an
 * agent of a kind that does not declare them they would be stored and never applied (an agent
 * believed confined to `tools: [read]` running with all its CLI's tools), so they are refused.
 */
const APPLIED_BY_SOME: Partial<Record<AgentFieldName, string>> = {
  role: "its CLI has no option Corral can pass a system prompt with (claude, api and ollama agents do); put the role in the prompt, or in the instructions file its CLI reads in the workdir (GEMINI.md, AGENTS.md…)",
  tools: "its CLI has no option Corral can choose its tools with (claude and api agents do); leave tools out, or use a claude or api agent",
  allowedHosts: "it is the http_get tool's setting of api agents",
  maxSteps: "it is the tool loop's setting of api agents",
};

/** The first field set (`settingOf`) that the agent's kind does not apply, and why; null when none is. */
export function unappliedField(kind: string, settingOf: (field: AgentFieldName) => unknown): { field: AgentFieldName; message: string } | null {
  const declared = new Set(agentKindModule(kind)?.fields.map((f) => f.name));
  for (const [field, why] of Object.entries(APPLIED_BY_SOME) as [AgentFieldName, string][]) {
    if (!declared.has(field) && !isEmpty(settingOf(field))) return { field, message: `${kind} agents take no ${field}: ${why}` };
  }
  return null;
}

/** Settings a NUL byte could reach: no program can be given one, and PostgreSQL stores none (text or jsonb). */
const TEXT_FIELDS: AgentFieldName[] = ["role", "description", "command", "args", "env", "workdir", "model", "sessions"];

const holdsNul = (value: unknown): boolean =>
  typeof value === "string"
    ? value.includes("\0")
    : Array.isArray(value)
      ? value.some(holdsNul)
      : value !== null && typeof value === "object" && Object.entries(value).some(([k, v]) => k.includes("\0") || holdsNul(v));

/** The first setting that holds a NUL byte, and the fix; null when none does. */
export function fieldWithNul(settingOf: (field: AgentFieldName) => unknown): { field: AgentFieldName; message: string } | null {
  const field = TEXT_FIELDS.find((f) => holdsNul(settingOf(f)));
  return field === undefined ? null : { field, message: `${field} holds a NUL byte (\\u0000), which no program can be given; remove it` };
}

/** Whether agents of the kind cannot do without the field (a command agent's `command`, its executable). */
export const kindRequires = (kind: string, field: AgentFieldName): boolean =>
  agentKindModule(kind)?.fields.some((f) => f.name === field && f.required !== null) === true;

/**
 * Why an agent pinned to one conversation of its worker (an OpenCode server agent joining one
 * session) cannot take part in these hub sessions: several would mix their messages in that one
 * conversation. Null when it can (not pinned, or one session at most).
 */
export function pinnedAcrossSessions(kind: string, sessions: readonly string[], env: Record<string, string>): string | null {
  const pinned = agentKindModule(kind)?.pinnedConversation?.({ env });
  if (!pinned || sessions.length <= 1) return null;
  return (
    `the agent joins ${pinned}, so it answers in one hub session at most: the messages of ${sessions.length} sessions would mix in one conversation there; ` +
    "name one session, or unpin it so that each conversation gets a session of its own"
  );
}
