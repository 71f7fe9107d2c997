import { fieldIssues, LaunchJobBodySchema, LaunchManyBodySchema, type LaunchJobBody, type LaunchManyBody } from "@corral/shared";
import { fieldErrorsOf, type FieldErrors } from "./api-errors.js";

/** The Launch form as typed: every field a string until launchBody reads it. */
export interface FormState {
  agent: string;
  prompt: string;
  workdir: string;
  model: string;
  timeout: string;
  /** Stops the job once its cost passes this many dollars (priced models only); "" sets none. */
  maxCost: string;
  /** Stops the job once its tokens in and out pass this many; "" sets none. */
  maxTokens: string;
  /** Run even while another job uses the workdir (offered when the server says it is busy). */
  sharedWorkdir: boolean;
  /**
   * Run in a new git worktree of the workdir's repository (each agent its own, launched to several);
   * null until the user ticks or unticks it: then the agents' own default holds (worktreeChecked).
   */
  worktree: boolean | null;
  /** The branch, tag or commit that worktree starts from; "" is HEAD. */
  base: string;
  /** The earlier job this launch continues (a relaunched follow-up); "" starts a new conversation. */
  session: string;
  /** The prompt goes to several agents (the `agents` ticked) instead of the one `agent`. */
  many: boolean;
  agents: string[];
}

export const emptyForm: FormState = {
  agent: "",
  prompt: "",
  workdir: "",
  model: "",
  timeout: "",
  maxCost: "",
  maxTokens: "",
  sharedWorkdir: false,
  worktree: null,
  base: "",
  session: "",
  many: false,
  agents: [],
};

/** The body field each form field fills: an error under that name belongs to the form field. */
export const bodyFieldOf: Record<keyof FormState, string> = {
  agent: "agent",
  prompt: "prompt",
  workdir: "workdir",
  model: "model",
  timeout: "timeoutS",
  maxCost: "maxCostUsd",
  maxTokens: "maxTokens",
  sharedWorkdir: "workdir",
  worktree: "worktree",
  base: "base",
  session: "session",
  many: "agents",
  agents: "agents",
};

/** What the form knows of each agent to fill its worktree box: whether its jobs run in a worktree unless a launch says not. */
export type WorktreeDefaults = ReadonlyArray<{ name: string; worktree: boolean }>;

/** The agents the launch goes to: the ones ticked, or the one chosen. */
function targets(form: FormState): string[] {
  const names = form.many ? form.agents : [form.agent];
  return names.filter(Boolean);
}

/** Each target agent's worktree default, in the targets' order (an agent not known runs in its workdir). */
function defaultsOf(form: FormState, agents: WorktreeDefaults): boolean[] {
  return targets(form).map((name) => agents.find((a) => a.name === name)?.worktree ?? false);
}

/** The target agents whose jobs run in a worktree by default. */
export function worktreeByDefault(form: FormState, agents: WorktreeDefaults): string[] {
  const defaults = defaultsOf(form, agents);
  return targets(form).filter((_, i) => defaults[i]);
}

/**
 * The worktree box as shown: the user's choice once they touched it; until then ticked when the
 * agent's default is a worktree (launched to several, when one of theirs is: each then gets its own),
 * so it follows the agent chosen. A shared workdir, once ticked, is no worktree's: it unticks it.
 */
export function worktreeChecked(form: FormState, agents: WorktreeDefaults): boolean {
  return form.worktree ?? (!form.sharedWorkdir && defaultsOf(form, agents).some(Boolean));
}

/**
 * Why one of the two boxes cannot be ticked while the other is: a worktree is its job's own, so
 * the server refuses a shared workdir with it. Null: it can.
 */
export const worktreeBlocked = (form: FormState): string | null =>
  form.sharedWorkdir ? "off while the workdir is shared: a worktree is its one job's own" : null;
export const sharingBlocked = (form: FormState, agents: WorktreeDefaults): string | null =>
  worktreeChecked(form, agents) ? "off while the worktree box is ticked: each job gets a worktree of its own" : null;

/**
 * The Workdir field's hint: where the job runs, as the boxes under it say. `many`: launched to
 * several agents; `agentWorkdir`: the one agent's default workdir.
 */
export function workdirHint(form: FormState, agents: WorktreeDefaults, many: boolean, agentWorkdir: string | null): string {
  if (worktreeChecked(form, agents)) {
    return many
      ? "must be in a git repository: each agent's job gets its own worktree and branch of it (empty: each agent's own workdir)"
      : `must be in a git repository: the job gets its own worktree and branch of it${agentWorkdir ? ` (default ${agentWorkdir})` : ""}`;
  }
  if (many)
    return form.sharedWorkdir ? "all the agents work here together" : "each agent works in its own folder here (empty: each in its own workdir)";
  return agentWorkdir ? `default ${agentWorkdir}` : "Recent and allowed directories are offered";
}

/**
 * The job fields as the body takes them: text that is no number goes as text, for the schema to say
 * what it wants. `worktree` is sent only where it differs from an agent's default (so `false` when
 * unticked for an agent whose default is a worktree, and nothing when every agent does as it would anyway).
 */
function jobFields(form: FormState, agents: WorktreeDefaults): Record<string, unknown> {
  const draft: Record<string, unknown> = { prompt: form.prompt };
  if (form.workdir.trim()) draft.workdir = form.workdir.trim();
  if (form.model.trim()) draft.model = form.model.trim();
  const numbers = { timeoutS: form.timeout, maxCostUsd: form.maxCost.replace(/^\s*\$/, ""), maxTokens: form.maxTokens };
  for (const [field, typed] of Object.entries(numbers)) {
    const text = typed.trim();
    if (text) draft[field] = Number.isNaN(Number(text)) ? text : Number(text);
  }
  if (form.sharedWorkdir) draft.sharedWorkdir = true;
  const worktree = worktreeChecked(form, agents);
  if (defaultsOf(form, agents).some((d) => d !== worktree)) draft.worktree = worktree;
  if (worktree && form.base.trim()) draft.base = form.base.trim();
  return draft;
}

/**
 * Builds the body and checks it with the server's own schema, so every bad field is named at
 * once, in the server's words, before anything is sent. `relaunchOf`: the job whose inputs the
 * form was opened with (Edit and relaunch), which the job launched records.
 */
export function launchBody(form: FormState, agents: WorktreeDefaults = [], relaunchOf?: string): { body: LaunchJobBody } | { errors: FieldErrors } {
  const draft = {
    agent: form.agent,
    ...jobFields(form, agents),
    ...(form.session ? { session: form.session } : {}),
    ...(relaunchOf ? { relaunchOf } : {}),
  };
  const parsed = LaunchJobBodySchema.safeParse(draft);
  return parsed.success ? { body: parsed.data } : { errors: fieldErrorsOf(fieldIssues(parsed.error)) };
}

/**
 * The body for one prompt to the ticked agents, checked as launchBody's is (an agent's error is under `agents`).
 * Several jobs relaunch no one job: the job the form was opened with is not recorded on them.
 */
export function launchManyBody(form: FormState, agents: WorktreeDefaults = []): { body: LaunchManyBody } | { errors: FieldErrors } {
  const parsed = LaunchManyBodySchema.safeParse({ agents: form.agents, ...jobFields(form, agents) });
  return parsed.success ? { body: parsed.data } : { errors: fieldErrorsOf(fieldIssues(parsed.error)) };
}

/**
 * The agents ticked when the form turns to several at once: those of the last launch to several
 * (the ones still enabled), else the agent the user chose; none when the form only filled one in
 * itself (`chosen` null), so no agent is launched that nobody picked.
 */
export function agentsToTick(chosen: string | null, remembered: readonly string[] | undefined, enabled: readonly string[]): string[] {
  const again = enabled.filter((name) => remembered?.includes(name));
  if (again.length) return again;
  return chosen && enabled.includes(chosen) ? [chosen] : [];
}

/** The one agent whose defaults the form's hints tell: the one chosen, or of several, the one ticked; "" while none or several are. */
export function hintAgent(form: FormState): string {
  if (!form.many) return form.agent;
  return form.agents.length === 1 ? (form.agents[0] ?? "") : "";
}

/**
 * What an empty field gives each agent ticked, launched to several: `empty: each agent's own
 * (claude: 600s, codex: 900s)`; with none ticked, that it is each one's own. Null when the launch
 * goes to one agent (its own hint says its default).
 */
export function eachAgentsDefault(form: FormState, defaultOf: (agent: string) => string | null): string | null {
  if (!form.many || form.agents.length === 1) return null;
  if (form.agents.length === 0) return "empty: each agent's own default";
  return `empty: each agent's own (${form.agents.map((name) => `${name}: ${defaultOf(name) ?? "the CLI's default"}`).join(", ")})`;
}

/**
 * What Launch remembers between visits: the agent and workdir of the last job launched from it,
 * and the agents of the last launch to several (ticked again when the form turns to several).
 */
export interface LaunchMemory {
  agent: string;
  workdir: string;
  agents?: string[];
}

const memoryKey = "corral.launch";

export function recallLaunch(storage: Pick<Storage, "getItem">): LaunchMemory | null {
  try {
    const value = JSON.parse(storage.getItem(memoryKey) ?? "null") as Partial<LaunchMemory> | null;
    if (typeof value?.agent !== "string" || typeof value.workdir !== "string") return null;
    const agents = Array.isArray(value.agents) ? value.agents.filter((a): a is string => typeof a === "string") : [];
    return { agent: value.agent, workdir: value.workdir, ...(agents.length ? { agents } : {}) };
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
