import { useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import type { AgentFormState, FormResult } from "../lib/domain/agent-form.js";
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

/** Edits an agent's settings; server refusals are shown at the field they name. */
export function AgentForm<T>({ initial, kind, isNew, toBody, save, onDone, submitLabel }: Props<T>) {
  const [form, setForm] = useState(initial);
  const [error, setError] = useState<{ field?: string; message: string; server?: ApiRequestError } | null>(null);
  const [pending, setPending] = useState(false);
  const set = (key: keyof AgentFormState) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));
  const errorFor = (field: string) => (error?.server ? error.server.messageFor(field) : error?.field === field ? error.message : undefined);
  const fields = ["name", "command", "args", "workdir", "model", "timeoutS", "maxConcurrent", "env", "baseUrl", "description"];
  const unplaced = error && !fields.some((f) => errorFor(f)) ? error.message : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const built = toBody(form);
    if ("field" in built) return setError(built);
    setPending(true);
    try {
      await save(built.body);
      setError(null);
      onDone();
    } catch (err) {
      setError({ message: (err as Error).message, ...(err instanceof ApiRequestError ? { server: err } : {}) });
    } finally {
      setPending(false);
    }
  };

  const input = (key: keyof AgentFormState, label: string, hint?: string, extra: Record<string, string> = {}) => {
    const id = `agent-${key}`;
    const field = key;
    return (
      <Field id={id} label={label} hint={hint} error={errorFor(field)}>
        <input id={id} value={form[key]} onChange={set(key)} {...describedBy(id, errorFor(field), Boolean(hint))} {...extra} />
      </Field>
    );
  };

  return (
    <form onSubmit={submit} className="stack" noValidate>
      <div className="form-grid">
        {isNew && input("name", "Name", "lowercase letters, digits, _; becomes the tools' prefix")}
        {kind !== "ollama" &&
          input(
            "command",
            kind === "command" ? "Executable" : "Binary override",
            kind === "command" ? "name on PATH or absolute path" : "empty: found on PATH",
          )}
        {kind === "ollama" && input("baseUrl", "Ollama URL", "empty: CORRAL_OLLAMA_URL")}
        {input("workdir", "Workdir", "~ allowed")}
        {input("model", "Default model", "empty: the agent's default")}
        {input("timeoutS", "Timeout (s)", undefined, { inputMode: "numeric" })}
        {input("maxConcurrent", "Parallel jobs", undefined, { inputMode: "numeric" })}
      </div>
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
        <input id="agent-description" value={form.description} onChange={set("description")} />
      </Field>
      {unplaced && (
        <div className="alert" role="alert">
          {unplaced}
        </div>
      )}
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
