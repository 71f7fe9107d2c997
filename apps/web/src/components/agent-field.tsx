import type { AgentField } from "@corral/shared";
import type { AgentFormValue } from "../lib/domain/agent-form.js";
import { describedBy, Field } from "./field.js";

interface Props {
  field: AgentField;
  value: AgentFormValue;
  /** The refusal this field is named in, shown under it and announced. */
  error: string | undefined;
  onChange: (value: AgentFormValue) => void;
}

/** One setting of an agent's form, drawn as its kind declares it: its label, hint, input and error. */
export function AgentFieldInput({ field, value, error, onChange }: Props) {
  const id = `agent-${field.name}`;
  const aria = describedBy(id, error, Boolean(field.hint));
  const hint = field.hint ?? undefined;
  const text = typeof value === "string" ? value : "";
  const input = field.input;
  switch (input.type) {
    case "toggle":
      return (
        <div className="field">
          <label className="toggle" htmlFor={id}>
            <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} {...aria} />
            <span>{field.label}</span>
          </label>
          {hint && !error && (
            <span className="hint" id={`${id}-hint`}>
              {hint}
            </span>
          )}
          {error && (
            <span className="error" id={`${id}-error`} role="alert">
              {error}
            </span>
          )}
        </div>
      );
    case "checklist": {
      const chosen = Array.isArray(value) ? value : [];
      const toggle = (option: string, on: boolean) =>
        onChange(input.options.map((o) => o.value).filter((v) => (v === option ? on : chosen.includes(v))));
      return (
        <fieldset className="field" aria-describedby={error ? `${id}-error` : undefined}>
          <legend>{field.label}</legend>
          <div className="tool-choices">
            {input.options.map((o) => (
              <label key={o.value} className="small">
                <input type="checkbox" checked={chosen.includes(o.value)} onChange={(e) => toggle(o.value, e.target.checked)} />
                <span>
                  <span className="mono">{o.value}</span> {o.label}
                </span>
              </label>
            ))}
          </div>
          {hint && !error && (
            <span className="hint" id={`${id}-hint`}>
              {hint}
            </span>
          )}
          {error && (
            <span className="error" id={`${id}-error`} role="alert">
              {error}
            </span>
          )}
        </fieldset>
      );
    }
    case "select":
      return (
        <Field id={id} label={field.label} hint={hint} error={error}>
          <select id={id} value={text} onChange={(e) => onChange(e.target.value)} {...aria}>
            {input.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </Field>
      );
    case "multiline":
    case "list":
    case "env":
      return (
        <Field id={id} label={field.label} hint={hint} error={error}>
          <textarea
            id={id}
            rows={input.rows}
            className={input.type === "env" || (input.type === "list" && input.mono) ? "mono" : undefined}
            value={text}
            onChange={(e) => onChange(e.target.value)}
            {...aria}
          />
        </Field>
      );
    default:
      return (
        <Field id={id} label={field.label} hint={hint} error={error}>
          <input
            id={id}
            value={text}
            onChange={(e) => onChange(e.target.value)}
            {...(input.type === "number" ? { inputMode: "numeric" as const } : {})}
            // A secret's field holds the name of the variable that keeps it: no browser should remember or correct it.
            {...(field.secret ? { autoComplete: "off", spellCheck: false } : {})}
            {...aria}
          />
        </Field>
      );
  }
}
