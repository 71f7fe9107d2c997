import type { CostGroup } from "@corral/shared";
import { formatTokens } from "../../lib/format/format.js";
import type { PriceTarget } from "./price-form.js";

/** Models whose jobs used tokens without a known price, each with a way to set one. */
export function UnpricedModels({ groups, onPrice }: { groups: CostGroup[]; onPrice: (target: PriceTarget) => void }) {
  return (
    <section aria-labelledby="unpriced-heading">
      <h2 id="unpriced-heading">Unpriced models</h2>
      <p className="small muted">
        These models used tokens but Corral knows no price for them, so their cost is unknown (not $0). Set a price to count them.
      </p>
      <ul className="stack" style={{ listStyle: "none", padding: 0 }}>
        {groups.map((g) => (
          <li key={`${g.provider}/${g.model}`} className="row">
            <span className="mono">
              {g.provider ?? "unknown provider"} / {g.model ?? "model not reported"}
            </span>
            <span className="small muted">
              {formatTokens(g.unpricedInputTokens)} in · {formatTokens(g.unpricedOutputTokens)} out
            </span>
            <button
              type="button"
              className="small"
              onClick={() => onPrice({ provider: g.provider ?? "", model: g.model ?? null })}
              aria-label={`Set price for ${g.provider ?? "unknown provider"} / ${g.model ?? "model not reported"}`}
            >
              Set price
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
