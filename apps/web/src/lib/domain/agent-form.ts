import type { AgentField, AgentKindDescriptor, AgentWithAvailability, CreateAgentBody, UpdateAgentBody } from "@corral/shared";

/**
 * The agent form as its inputs hold it, by field name: text for every input but a checklist,
 * which holds the chosen values, and a toggle, which holds whether it is ticked. Which fields there are, and how each becomes a value of the
 * request body, the agent's kind says (`GET /api/agent-kinds`); nothing here knows a kind.
 */
export type AgentFormValue = string | string[] | boolean;
export type AgentFormState = Record<string, AgentFormValue>;

export type FormResult<T> = { body: T } | { field: string; message: string };

/** The fields the form shows: all of the kind's, but those set only when an agent is added in an edit. */
export const formFields = (kind: AgentKindDescriptor, isNew: boolean): AgentField[] => kind.fields.filter((f) => isNew || !f.createOnly);

/** A field shown only while another field's list holds a value (the hosts of http_get) is hidden otherwise. */
export function isShown(field: AgentField, form: AgentFormState): boolean {
  if (!field.shownWhen) return true;
  const other = form[field.shownWhen.field];
  return Array.isArray(other) && other.includes(field.shownWhen.includes);
}

const textOf = (value: AgentFormValue | undefined): string => (typeof value === "string" ? value : "");
const listOf = (value: AgentFormValue | undefined): string[] => (Array.isArray(value) ? value : []);

/** A setting as its input shows it. */
function draftOf(field: AgentField, value: unknown): AgentFormValue {
  switch (field.input.type) {
    case "toggle":
      return value === true;
    case "checklist":
      return Array.isArray(value) ? value.map(String) : listOf(field.default ?? undefined);
    case "select":
      return typeof value === "string" ? value : textOf(field.default ?? undefined) || (field.input.options[0]?.value ?? "");
    case "list":
      return Array.isArray(value) ? value.join("\n") : "";
    case "env":
      return value && typeof value === "object"
        ? Object.entries(value)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join("\n")
        : "";
    default:
      return value === null || value === undefined ? "" : String(value);
  }
}

/** A new agent's form: each field at its kind's default. */
export function newAgentForm(kind: AgentKindDescriptor): AgentFormState {
  return Object.fromEntries(kind.fields.map((f) => [f.name, draftOf(f, f.default)]));
}

/** The form with a preset's values in the fields it names (the rest as the user left them). */
export function withPreset(form: AgentFormState, kind: AgentKindDescriptor, values: Partial<Record<string, string | string[]>>): AgentFormState {
  const filled = kind.fields.filter((f) => values[f.name] !== undefined).map((f) => [f.name, draftOf(f, values[f.name])]);
  return { ...form, ...Object.fromEntries(filled) };
}

/** An agent's settings in its kind's form. */
export function formFromAgent(agent: AgentWithAvailability, kind: AgentKindDescriptor): AgentFormState {
  const settings: Record<string, unknown> = agent;
  return Object.fromEntries(kind.fields.map((f) => [f.name, draftOf(f, settings[f.name])]));
}

type Parsed = { value: unknown; empty: boolean } | { message: string };

function parseEnv(text: string): Parsed {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) return { message: `"${line}" is not KEY=VALUE` };
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return { value: env, empty: Object.keys(env).length === 0 };
}

/** The value a field's input holds, as the request body takes it. */
function parse(field: AgentField, draft: AgentFormValue | undefined): Parsed {
  const input = field.input;
  switch (input.type) {
    // Unticked is a value too (false), never "empty": the agent's setting is what the box shows.
    case "toggle":
      return { value: draft === true, empty: false };
    case "checklist": {
      const chosen = listOf(draft);
      const offered = input.options.map((o) => o.value);
      // A value the agent has that the list does not offer (a claude agent's list_files, set over REST) is kept:
      // dropped, an agent confined to it would be saved with none ticked, which is its kind's default set.
      const kept = chosen.filter((v) => !offered.includes(v));
      return { value: [...offered.filter((v) => chosen.includes(v)), ...kept], empty: chosen.length === 0 };
    }
    case "list": {
      // Arguments keep their spaces; names (hosts) are split at spaces and commas too.
      const items =
        input.split === "lines"
          ? textOf(draft)
              .split("\n")
              .filter((line) => line.length > 0)
          : textOf(draft)
              .split(/[\s,]+/)
              .filter(Boolean);
      return { value: items, empty: items.length === 0 };
    }
    case "env":
      return parseEnv(textOf(draft));
    case "number": {
      const text = textOf(draft).trim();
      if (!text) return { value: undefined, empty: true };
      const n = Number(text);
      return Number.isInteger(n) ? { value: n, empty: false } : { message: "give a whole number" };
    }
    default: {
      const text = textOf(draft).trim();
      return { value: text, empty: text === "" };
    }
  }
}

const EMPTY_VALUES: Record<AgentField["input"]["type"], unknown> = {
  text: "",
  number: undefined,
  multiline: "",
  select: "",
  checklist: [],
  list: [],
  env: {},
  toggle: false,
};

/**
 * The request body's fields: each shown field's value, an empty one as its kind says (null for the
 * agent's default, left out to keep the value, or the empty value itself). A field the kind
 * requires is refused here when empty, with the server's own words, before anything is sent.
 */
function bodyFields(form: AgentFormState, kind: AgentKindDescriptor, isNew: boolean): FormResult<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  for (const field of formFields(kind, isNew)) {
    const parsed = parse(field, form[field.name]);
    if ("message" in parsed) return { field: field.name, message: parsed.message };
    if (!parsed.empty) {
      body[field.name] = parsed.value;
      continue;
    }
    if (field.required) return { field: field.name, message: field.required };
    if (field.whenEmpty === "blank") body[field.name] = EMPTY_VALUES[field.input.type];
    // A new agent without the value gets the default by leaving it out (a SQLite registry takes no runner label at all).
    else if (field.whenEmpty === "default" && !isNew) body[field.name] = null;
  }
  return { body };
}

/** An edit: every field a user can change; the server checks the values against its schema. */
export function updateBody(form: AgentFormState, kind: AgentKindDescriptor): FormResult<UpdateAgentBody> {
  const built = bodyFields(form, kind, false);
  return "field" in built ? built : { body: built.body as UpdateAgentBody };
}

export function createBody(form: AgentFormState, kind: AgentKindDescriptor): FormResult<CreateAgentBody> {
  const built = bodyFields(form, kind, true);
  return "field" in built ? built : { body: { ...built.body, kind: kind.kind } as CreateAgentBody };
}
