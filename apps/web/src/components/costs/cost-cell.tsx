import type { CostTotals } from "@corral/shared";
import { formatCost } from "../../lib/format/format.js";

/** A cost that counts unpriced jobs as unknown, never as $0. */
export function CostCell({ t }: { t: CostTotals }) {
  return (
    <>
      {t.costUsd === null ? (
        t.unpricedJobs > 0 ? (
          <span className="badge warn">unpriced</span>
        ) : (
          <span className="muted" title="These jobs reported no token usage">
            no usage
          </span>
        )
      ) : (
        formatCost(t.costUsd)
      )}
      {t.costUsd !== null && t.unpricedJobs > 0 && (
        <div className="small" style={{ color: "var(--warn)" }}>
          + {t.unpricedJobs} unpriced
        </div>
      )}
    </>
  );
}
