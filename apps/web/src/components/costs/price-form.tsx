import { useEffect, useRef, useState } from "react";
import { ApiRequestError } from "../../api/client.js";
import { useSetPrice } from "../../hooks/use-costs.js";
import { priceBody, priceDraftErrors, type PriceDraft, type PriceField } from "../../lib/domain/price-form.js";
import { describedBy, Field } from "../field.js";

/** What a price is being set for: a model the jobs reported, one they did not name (null), or any (empty). */
export interface PriceTarget {
  provider: string;
  model: string | null;
}

const FIELDS: { field: PriceField; id: string; label: string; key: keyof PriceDraft; decimal?: boolean; optional?: boolean }[] = [
  { field: "provider", id: "price-provider", label: "Provider", key: "provider" },
  { field: "model", id: "price-model", label: "Model", key: "model" },
  { field: "inputPerM", id: "price-input", label: "USD / M input", key: "input", decimal: true },
  { field: "outputPerM", id: "price-output", label: "USD / M output", key: "output", decimal: true },
  { field: "cachedInputPerM", id: "price-cached", label: "USD / M cached input", key: "cached", decimal: true, optional: true },
];

/**
 * Sets a model's price, filled in with what the jobs used. Every field is checked here first and
 * told in words, so the server's schema messages never reach the user.
 */
export function PriceForm({ target, onClose }: { target: PriceTarget; onClose: () => void }) {
  const [draft, setDraft] = useState<PriceDraft>({ provider: target.provider, model: target.model ?? "", input: "", output: "", cached: "" });
  const [errors, setErrors] = useState<Partial<Record<PriceField, string>>>({});
  const save = useSetPrice();
  const serverError = save.error instanceof ApiRequestError ? save.error : null;
  const form = useRef<HTMLFormElement>(null);
  const unknownModel = target.model === null;

  // Opened from a row further up: bring it into view at the first field left to fill.
  useEffect(() => {
    const first = form.current?.querySelector<HTMLInputElement>("input:placeholder-shown");
    form.current?.scrollIntoView({ block: "nearest" });
    first?.focus();
  }, []);

  const errorFor = (f: PriceField) => errors[f] ?? (serverError?.field ? serverError.messageFor(f) : undefined);
  const change = (key: keyof PriceDraft, field: PriceField, value: string) => {
    const next = { ...draft, [key]: value };
    setDraft(next);
    if (errors[field]) setErrors({ ...errors, [field]: priceDraftErrors(next)[field] });
  };

  return (
    <form
      ref={form}
      className="card stack"
      aria-labelledby="price-heading"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const found = priceDraftErrors(draft);
        setErrors(found);
        const first = FIELDS.find((f) => found[f.field]);
        if (first) {
          document.getElementById(first.id)?.focus();
          return;
        }
        save.mutate(priceBody(draft));
      }}
    >
      <h2 id="price-heading" style={{ margin: 0 }}>
        Set a price
      </h2>
      {unknownModel && (
        <p className="alert warn" role="note">
          The worker did not report which model these {target.provider || "provider's"} jobs used, so Corral cannot price them. Type the model name to
          set its price for the jobs that report it, and give new jobs a model when you launch them so they are priced.
        </p>
      )}
      <div className="form-grid">
        {FIELDS.map((f) => (
          <Field key={f.id} id={f.id} label={f.label} error={errorFor(f.field)} hint={f.optional ? "empty: the input price" : undefined}>
            <input
              id={f.id}
              value={draft[f.key]}
              placeholder={f.optional ? "" : f.decimal ? "0.00" : f.field === "model" ? "model name, as billed" : "openai"}
              {...(f.decimal ? { inputMode: "decimal" as const } : {})}
              onChange={(e) => change(f.key, f.field, e.target.value)}
              {...describedBy(f.id, errorFor(f.field), Boolean(f.optional))}
            />
          </Field>
        ))}
      </div>
      {save.error && !serverError?.field && (
        <div className="alert" role="alert">
          The price was not saved: {save.error.message}
        </div>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save price
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
        {save.isSuccess && (
          <span className="small" role="status">
            Saved; totals now use it.
          </span>
        )}
      </div>
    </form>
  );
}
