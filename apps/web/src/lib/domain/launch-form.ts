import { fieldIssues, LaunchJobBodySchema, type LaunchJobBody } from "@corral/shared";
import { fieldErrorsOf, type FieldErrors } from "./api-errors.js";

/** The Launch form as typed: every field a string until launchBody reads it. */
export interface FormState {
  agent: string;
  prompt: string;
  workdir: string;
  model: string;
  timeout: string;
  /** Run even while another job uses the workdir (offered when the server says it is busy). */
  sharedWorkdir: boolean;
  /** The earlier job this launch continues (a relaunched follow-up); "" starts a new conversation. */
  session: string;
}

export const emptyForm: FormState = { agent: "", prompt: "", workdir: "", model: "", timeout: "", sharedWorkdir: false, session: "" };

/** The body field each form field fills: an error under that name belongs to the form field. */
export const bodyFieldOf: Record<keyof FormState, string> = {
  agent: "agent",
  prompt: "prompt",
  workdir: "workdir",
  model: "model",
  timeout: "timeoutS",
  sharedWorkdir: "workdir",
  session: "session",
};

/**
 * Builds the body and checks it with the server's own schema, so every bad field is named at
 * once, in the server's words, before anything is sent.
 */
export function launchBody(form: FormState): { body: LaunchJobBody } | { errors: FieldErrors } {
  const timeout = form.timeout.trim();
  const draft: Record<string, unknown> = { agent: form.agent, prompt: form.prompt };
  if (form.workdir.trim()) draft.workdir = form.workdir.trim();
  if (form.model.trim()) draft.model = form.model.trim();
  // Text that is no number goes as text, for the schema to say what it wants.
  if (timeout) draft.timeoutS = Number.isNaN(Number(timeout)) ? timeout : Number(timeout);
  if (form.sharedWorkdir) draft.sharedWorkdir = true;
  if (form.session) draft.session = form.session;
  const parsed = LaunchJobBodySchema.safeParse(draft);
  return parsed.success ? { body: parsed.data } : { errors: fieldErrorsOf(fieldIssues(parsed.error)) };
}

/** What Launch remembers between visits: the agent and workdir of the last job launched from it. */
export interface LaunchMemory {
  agent: string;
  workdir: string;
}

const memoryKey = "corral.launch";

export function recallLaunch(storage: Pick<Storage, "getItem">): LaunchMemory | null {
  try {
    const value = JSON.parse(storage.getItem(memoryKey) ?? "null") as Partial<LaunchMemory> | null;
    return typeof value?.agent === "string" && typeof value.workdir === "string" ? { agent: value.agent, workdir: value.workdir } : null;
  } catch {
    return null;
  }
}

export function rememberLaunch(storage: Pick<Storage, "setItem">, memory: LaunchMemory): void {
  try {
    storage.setItem(memoryKey, JSON.stringify(memory));
  } catch {
    // Storage full or refused (private mode): the form simply starts from the defaults next time.
  }
}
