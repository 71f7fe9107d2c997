import { type FormEvent, type ReactNode, useState } from "react";
import type { AgentField, AgentKindDescriptor } from "@corral/shared";
import { ApiRequestError } from "../api/client.js";
import { type AgentFormState, type AgentFormValue, type FormResult, formFields, isShown, withPreset } from "../lib/domain/agent-form.js";
import { panelErrors, type PanelError } from "../lib/domain/api-errors.js";
import { AgentFieldInput } from "./agent-field.js";

interface Props<T> {
  initial: AgentFormState;
  kind: AgentKindDescriptor;
  isNew: boolean;
  toBody: (form: AgentFormState) => FormResult<T>;
  save: (body: T) => Promise<unknown>;
  onDone: () => void;
  submitLabel: string;
}

/** The fields in order, short ones side by side in the grid and wide ones across the form. */
function layout(fields: AgentField[], render: (field: AgentField) => ReactNode): ReactNode[] {
  const out: ReactNode[] = [];
  let grid: AgentField[] = [];
  const flush = () => {
    if (grid.length)
      out.push(
        <div className="form-grid" key={`grid-${grid[0]?.name}`}>
          {grid.map(render)}
        </div>,
      );
    grid = [];
  };
  for (const field of fields) {
    if (field.wide) {
      flush();
      out.push(render(field));
    } else grid.push(field);
  }
  flush();
  return out;
}

/**
 * Edits an agent's settings, the fields its kind declares; every refusal is shown at the field
 * it names, and goes once that field changes.
 */
export function AgentForm<T>({ initial, kind, isNew, toBody, save, onDone, submitLabel }: Props<T>) {
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<PanelError[]>([]);
  const [pending, setPending] = useState(false);
  const change = (name: string, value: AgentFormValue) => {
    setForm((f) => ({ ...f, [name]: value }));
    setErrors((all) => all.filter((err) => err.field !== name));
  };
  const fields = formFields(kind, isNew);
  const shown = fields.filter((f) => isShown(f, form));
  const errorFor = (field: string) => errors.find((e) => e.field === field)?.text;
  const unplaced = errors.filter((e) => e.field === null || !shown.some((f) => f.name === e.field));
  const presets = isNew ? (kind.adding?.presets ?? []) : [];

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

  return (
    <form onSubmit={submit} className="stack" noValidate>
      {presets.length > 0 && (
        <div className="row" role="group" aria-label="Start from a known agent">
          <span className="small muted">Start from:</span>
          {presets.map((preset) => (
            <button
              key={preset.label}
              type="button"
              className="small"
              onClick={() => {
                setForm((f) => withPreset(f, kind, preset.values));
                setErrors([]);
              }}
            >
              {preset.label}
            </button>
          ))}
        </div>
      )}
      {layout(shown, (field) => (
        <AgentFieldInput
          key={field.name}
          field={field}
          value={form[field.name] ?? ""}
          error={errorFor(field.name)}
          onChange={(value) => change(field.name, value)}
        />
      ))}
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
