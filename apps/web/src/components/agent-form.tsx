import { useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import { type AgentFormState, type FormResult, serverUrlField } from "../lib/domain/agent-form.js";
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

const fields: string[] = ["name", "command", "args", "workdir", "model", "timeoutS", "maxConcurrent", "env", "baseUrl", "description"];

/** Edits an agent's settings; every refusal is shown at the field it names, and goes once that field changes. */
export function AgentForm<T>({ initial, kind, isNew, toBody, save, onDone, submitLabel }: Props<T>) {
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<PanelError[]>([]);
  const [pending, setPending] = useState(false);
  const set = (key: keyof AgentFormState) => (e: { target: { value: string } }) => {
    setForm((f) => ({ ...f, [key]: e.target.value }));
    setErrors((all) => all.filter((err) => err.field !== key));
  };
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
        {!serverUrl &&
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
