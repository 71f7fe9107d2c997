import type { ReactNode } from "react";

/** A labelled form field whose error (from the server) sits right under it and is announced. */
export function Field({ id, label, hint, error, children }: { id: string; label: string; hint?: ReactNode; error?: string; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
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
}

/** aria props tying an input to its hint or error. */
export function describedBy(id: string, error: string | undefined, hint: boolean): { "aria-invalid"?: true; "aria-describedby"?: string } {
  if (error) return { "aria-invalid": true, "aria-describedby": `${id}-error` };
  return hint ? { "aria-describedby": `${id}-hint` } : {};
}
