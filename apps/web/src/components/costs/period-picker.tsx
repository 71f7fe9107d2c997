import type { CostRange } from "../../api/costs.js";

export const presets = [
  { id: "today", label: "Today" },
  { id: "7d", label: "7 days" },
  { id: "30d", label: "30 days" },
  { id: "month", label: "This month" },
] as const;

export type Preset = (typeof presets)[number]["id"] | "custom";

export function PeriodPicker({
  preset,
  range,
  onPreset,
  onCustom,
}: {
  preset: Preset;
  range: CostRange;
  onPreset: (p: Preset) => void;
  onCustom: (r: CostRange) => void;
}) {
  return (
    <div className="row" role="group" aria-label="Period">
      {presets.map((p) => (
        <button
          key={p.id}
          type="button"
          className="small"
          aria-pressed={preset === p.id}
          onClick={() => onPreset(p.id)}
          style={preset === p.id ? { background: "var(--accent)", color: "var(--accent-text)", borderColor: "var(--accent)" } : undefined}
        >
          {p.label}
        </button>
      ))}
      <input type="date" aria-label="From" value={range.from} onChange={(e) => onCustom({ ...range, from: e.target.value })} />
      <input type="date" aria-label="To" value={range.to} onChange={(e) => onCustom({ ...range, to: e.target.value })} />
    </div>
  );
}
