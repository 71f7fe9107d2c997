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

/** Whether agents of the kind cannot do without the field (a command agent's `command`, its executable). */
export const kindRequires = (kind: string, field: AgentFieldName): boolean =>
  agentKindModule(kind)?.fields.some((f) => f.name === field && f.required !== null) === true;
