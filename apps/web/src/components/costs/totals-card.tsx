import type { CostTotals } from "@corral/shared";
import { formatTokens, totalCostText } from "../../lib/format/format.js";

/** The period's headline figures. */
export function TotalsCard({ t }: { t: CostTotals }) {
  return (
    <div className="card row" style={{ gap: "2rem" }} role="group" aria-label="Totals">
      <div className="stat">
        {/* The unpriced jobs have their own figure beside it, so the headline is the priced sum alone. */}
        <span className="value" data-testid="total-cost">
          {totalCostText(t, true)}
        </span>
        <span className="label">cost of priced jobs</span>
      </div>
      <div className="stat">
        <span className="value">{t.jobs}</span>
        <span className="label">jobs</span>
      </div>
      <div className="stat">
        <span className="value">{formatTokens(t.inputTokens)}</span>
        <span className="label">tokens in ({formatTokens(t.cachedInputTokens)} cached)</span>
      </div>
      <div className="stat">
        <span className="value">{formatTokens(t.outputTokens)}</span>
        <span className="label">tokens out</span>
      </div>
      <div className="stat">
        <span className="value" style={t.unpricedJobs ? { color: "var(--warn)" } : undefined}>
          {t.unpricedJobs}
        </span>
        <span className="label">unpriced jobs (cost unknown)</span>
      </div>
      {t.noUsageJobs > 0 && (
        <div className="stat">
          <span className="value muted">{t.noUsageJobs}</span>
          <span className="label">jobs reported no usage</span>
        </div>
      )}
    </div>
  );
}
