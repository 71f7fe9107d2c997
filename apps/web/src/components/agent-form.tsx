import { useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import { AgentToolSchema, type AgentTool, type ModelApi } from "@corral/shared";
import { type AgentFormState, type FormResult, MODEL_API_LABELS, MODEL_APIS, serverUrlField } from "../lib/domain/agent-form.js";
import { panelErrors, type PanelError } from "../lib/domain/api-errors.js";
import { describedBy, Field } from "./field.js";

interface Props<T> {
  initial: AgentFormState;
  kind: string;
  isNew: boolean;
  toBody: (form: AgentFormState) => FormResult<T>;
  save: (body: T) => Promise<unknown>;
  onDone: () => void;
  submitLabel: string;
}

const fields: string[] = [
  "name",
  "command",
  "args",
  "workdir",
  "model",
  "timeoutS",
  "maxConcurrent",
  "env",
  "baseUrl",
  "description",
  "api",
  "apiKeyEnv",
  "runnerLabel",
  "maxSteps",
  "role",
  "tools",
  "allowedHosts",
];

/** What each tool lets the model do, as the checkbox says it. */
const TOOL_LABELS: Record<AgentTool, string> = {
  read_file: "read files",
  write_file: "write files",
  list_files: "list a folder",
  glob: "find files by name",
  grep: "search file contents",
  bash: "run commands (sandboxed, no network)",
  http_get: "fetch from allowed hosts",
};

/** Kinds that run in Corral and take a role. */
const takesRole = (kind: string) => kind === "api" || kind === "ollama";

/** Edits an agent's settings; every refusal is shown at the field it names, and goes once that field changes. */
export function AgentForm<T>({ initial, kind, isNew, toBody, save, onDone, submitLabel }: Props<T>) {
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<PanelError[]>([]);
  const [pending, setPending] = useState(false);
  const change = (key: keyof AgentFormState, value: AgentFormState[keyof AgentFormState]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setErrors((all) => all.filter((err) => err.field !== key));
  };
  const set = (key: keyof AgentFormState) => (e: { target: { value: string } }) => change(key, e.target.value);
  const toggleTool = (tool: AgentTool, on: boolean) =>
    change(
      "tools",
      AgentToolSchema.options.filter((t) => (t === tool ? on : form.tools.includes(t))),
    );
  const errorFor = (field: string) => errors.find((e) => e.field === field)?.text;
  const unplaced = errors.filter((e) => e.field === null || !fields.includes(e.field));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const built = toBody(form);
    if ("field" in built) return setErrors([{ field: built.field, text: built.message }]);
    setPending(true);
    try {
      await save(built.body);
      setErrors([]);
      onDone();
    } catch (err) {
      setErrors(err instanceof ApiRequestError ? panelErrors(err) : [{ field: null, text: (err as Error).message }]);
    } finally {
      setPending(false);
    }
  };

  const serverUrl = serverUrlField(kind);
  type TextKey = { [K in keyof AgentFormState]: AgentFormState[K] extends string ? K : never }[keyof AgentFormState];
  const input = (key: TextKey, label: string, hint?: string, extra: Record<string, string> = {}) => {
    const id = `agent-${key}`;
    const field = key;
    return (
      <Field id={id} label={label} hint={hint} error={errorFor(field)}>
        <input id={id} value={form[key]} onChange={set(key)} {...describedBy(id, errorFor(field), Boolean(hint))} {...extra} />
      </Field>
    );
  };
  const textarea = (key: TextKey, label: string, rows: number, hint?: string) => {
    const id = `agent-${key}`;
    return (
      <Field id={id} label={label} hint={hint} error={errorFor(key)}>
        <textarea id={id} rows={rows} value={form[key]} onChange={set(key)} {...describedBy(id, errorFor(key), Boolean(hint))} />
      </Field>
    );
  };

  return (
    <form onSubmit={submit} className="stack" noValidate>
      <div className="form-grid">
        {isNew && input("name", "Name", "lowercase letters, digits, _; becomes the tools' prefix")}
        {kind === "api" && (
          <Field id="agent-api" label="API" error={errorFor("api")}>
            <select
              id="agent-api"
              value={form.api}
              onChange={(e) => change("api", e.target.value as ModelApi)}
              {...describedBy("agent-api", errorFor("api"), false)}
            >
              {MODEL_APIS.map((a) => (
                <option key={a} value={a}>
                  {MODEL_API_LABELS[a]}
                </option>
              ))}
            </select>
          </Field>
        )}
        {kind === "api" && input("baseUrl", "Base URL", "empty: the API's own; e.g. http://localhost:1234/v1")}
        {kind === "api" && input("apiKeyEnv", "Key variable", "the environment variable holding the key; empty: no key sent")}
        {!serverUrl &&
          kind !== "api" &&
          input(
            "command",
            kind === "command" ? "Executable" : "Binary override",
            kind === "command" ? "name on PATH or absolute path" : "empty: found on PATH",
          )}
        {serverUrl && input("baseUrl", serverUrl.label, serverUrl.hint)}
        {input("workdir", "Workdir", "~ allowed")}
        {input("model", "Default model", "empty: the agent's default")}
        {input("timeoutS", "Timeout (s)", undefined, { inputMode: "numeric" })}
        {input("maxConcurrent", "Parallel jobs", undefined, { inputMode: "numeric" })}
        {input(
          "runnerLabel",
          "Runner label",
          "empty: this server runs its jobs; e.g. gpu: a corral runner with that label does (PostgreSQL registry)",
        )}
        {kind === "api" && input("maxSteps", "Step limit", "model turns per job; empty: 25", { inputMode: "numeric" })}
      </div>
      {takesRole(kind) && textarea("role", "Role", 3, "the system prompt; empty: a worker that completes the task with its tools")}
      {kind === "api" && (
        <fieldset className="field" aria-describedby={errorFor("tools") ? "agent-tools-error" : undefined}>
          <legend>Tools</legend>
          <div className="tool-choices">
            {AgentToolSchema.options.map((tool) => (
              <label key={tool} className="small">
                <input type="checkbox" checked={form.tools.includes(tool)} onChange={(e) => toggleTool(tool, e.target.checked)} />
                <span>
                  <span className="mono">{tool}</span> {TOOL_LABELS[tool]}
                </span>
              </label>
            ))}
          </div>
          {errorFor("tools") && (
            <span className="error" id="agent-tools-error" role="alert">
              {errorFor("tools")}
            </span>
          )}
        </fieldset>
      )}
      {kind === "api" &&
        form.tools.includes("http_get") &&
        textarea("allowedHosts", "Hosts http_get may reach", 2, "one per line: example.com, or *.example.com for its subdomains")}
      {kind === "command" && (
        <Field id="agent-args" label="Arguments, one per line" hint="{prompt}, {workdir} and {model} are replaced" error={errorFor("args")}>
          <textarea
            id="agent-args"
            rows={3}
            className="mono"
            value={form.args}
            onChange={set("args")}
            {...describedBy("agent-args", errorFor("args"), true)}
          />
        </Field>
      )}
      <Field id="agent-env" label="Environment, KEY=VALUE per line" error={errorFor("env")}>
        <textarea
          id="agent-env"
          rows={2}
          className="mono"
          value={form.env}
          onChange={set("env")}
          {...describedBy("agent-env", errorFor("env"), false)}
        />
      </Field>
      <Field id="agent-description" label="Description" error={errorFor("description")}>
        <input
          id="agent-description"
          value={form.description}
          onChange={set("description")}
          {...describedBy("agent-description", errorFor("description"), false)}
        />
      </Field>
      {unplaced.map((e) => (
        <div className="alert" role="alert" key={e.text}>
          {e.text}
        </div>
      ))}
      <div className="row">
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "Saving…" : submitLabel}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
