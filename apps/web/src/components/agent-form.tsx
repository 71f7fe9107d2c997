import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
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
 * Where a refused save takes the user, who clicked at the bottom of a dialog that may be scrolled:
 * to the first field named (its input focused, so its error is read with it, and scrolled into
 * view), else to the refusal beside the buttons.
 */
function focusRefusal(form: HTMLFormElement, fieldsInError: string[]): void {
  for (const name of fieldsInError) {
    const control =
      form.querySelector<HTMLElement>(`#agent-${CSS.escape(name)}`) ??
      form.querySelector<HTMLElement>(`[aria-describedby="agent-${CSS.escape(name)}-error"] input`);
    if (control) {
      control.focus({ preventScroll: true });
      control.scrollIntoView({ block: "center" });
      return;
    }
  }
  const refusal = form.querySelector<HTMLElement>(".form-refusal");
  refusal?.focus({ preventScroll: true });
  refusal?.scrollIntoView({ block: "nearest" });
}

/**
 * Edits an agent's settings, the fields its kind declares; every refusal is shown at the field
 * it names, and goes once that field changes. A refused save says so beside its button too, and
 * takes the user to what to fix.
 */
export function AgentForm<T>({ initial, kind, isNew, toBody, save, onDone, submitLabel }: Props<T>) {
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<PanelError[]>([]);
  const [pending, setPending] = useState(false);
  // Counts refused saves: each one, even with the same errors, takes the user to them again.
  const [refusals, setRefusals] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);
  const change = (name: string, value: AgentFormValue) => {
    setForm((f) => ({ ...f, [name]: value }));
    setErrors((all) => all.filter((err) => err.field !== name));
  };
  const fields = formFields(kind, isNew);
  const shown = fields.filter((f) => isShown(f, form));
  const errorFor = (field: string) => errors.find((e) => e.field === field)?.text;
  const unplaced = errors.filter((e) => e.field === null || !shown.some((f) => f.name === e.field));
  const presets = isNew ? (kind.adding?.presets ?? []) : [];
  const placed = shown.filter((f) => errorFor(f.name) !== undefined);
  // Read at each refusal, not on every keystroke: a fixed field takes no one anywhere.
  const inError = useRef<string[]>([]);
  inError.current = placed.map((f) => f.name);
  useEffect(() => {
    if (refusals > 0 && formRef.current) focusRefusal(formRef.current, inError.current);
  }, [refusals]);
  const refuse = (found: PanelError[]) => {
    setErrors(found);
    setRefusals((n) => n + 1);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const built = toBody(form);
    if ("field" in built) return refuse([{ field: built.field, text: built.message }]);
    setPending(true);
    try {
      await save(built.body);
      setErrors([]);
      onDone();
    } catch (err) {
      refuse(err instanceof ApiRequestError ? panelErrors(err) : [{ field: null, text: (err as Error).message }]);
    } finally {
      setPending(false);
    }
  };

  return (
    <form onSubmit={submit} className="stack" noValidate ref={formRef}>
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
      {unplaced.map((e, i) => (
        // The first is where focus goes when no field of the form is named.
        <div className={i === 0 ? "alert form-refusal" : "alert"} role="alert" key={e.text} tabIndex={i === 0 ? -1 : undefined}>
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
        {placed.length > 0 && (
          <span className="not-saved small" data-testid="form-not-saved">
            Not saved: fix {placed.map((f) => f.label).join(", ")}
          </span>
        )}
      </div>
    </form>
  );
}
