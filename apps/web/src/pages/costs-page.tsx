import type { CostReport } from "@corral/shared";
import { useState } from "react";
import { presetRange, type CostRange } from "../api/costs.js";
import { BudgetsSection } from "../components/costs/budgets.js";
import { CostChart } from "../components/costs/cost-chart.js";
import { GroupTable } from "../components/costs/group-table.js";
import { PeriodPicker, type Preset } from "../components/costs/period-picker.js";
import { PriceForm, type PriceTarget } from "../components/costs/price-form.js";
import { PriceOverrides } from "../components/costs/price-overrides.js";
import { TotalsCard } from "../components/costs/totals-card.js";
import { UnpricedModels } from "../components/costs/unpriced-models.js";
import { ErrorState, Loading } from "../components/states.js";
import { useCostReport, usePrices } from "../hooks/use-costs.js";

/** Totals, the chart, the group tables and the models without a price, for one period. */
function Report({ range, byProvider, onPrice }: { range: CostRange; byProvider: CostReport; onPrice: (target: PriceTarget) => void }) {
  const byModel = useCostReport(range, ["provider", "model"]);
  const byAgent = useCostReport(range, ["agent"]);
  const unpricedModels = byModel.data?.groups.filter((g) => g.unpricedJobs > 0) ?? [];
  return (
    <>
      <TotalsCard t={byProvider.totals} />
      <CostChart range={range} jobs={byProvider.totals.jobs} />
      <div className="grid-2" style={{ marginTop: "0.75rem" }}>
        <GroupTable title="By provider" groups={byProvider.groups} label={(g) => g.provider ?? "unknown"} />
        <GroupTable title="By agent" groups={byAgent.data?.groups ?? []} label={(g) => g.agent ?? "unknown"} />
      </div>
      <div style={{ marginTop: "0.75rem" }}>
        <GroupTable title="By model" groups={byModel.data?.groups ?? []} label={(g) => `${g.provider ?? "?"} / ${g.model ?? "not reported"}`} />
      </div>
      {unpricedModels.length > 0 && <UnpricedModels groups={unpricedModels} onPrice={onPrice} />}
    </>
  );
}

export function CostsPage() {
  const [preset, setPreset] = useState<Preset>("30d");
  const [custom, setCustom] = useState<CostRange>(() => presetRange("30d"));
  const range = preset === "custom" ? custom : presetRange(preset);
  const byProvider = useCostReport(range, ["provider"]);
  const prices = usePrices();
  const [pricing, setPricing] = useState<PriceTarget | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>Costs</h1>
        <PeriodPicker
          preset={preset}
          range={range}
          onPreset={setPreset}
          onCustom={(r) => {
            setCustom(r);
            setPreset("custom");
          }}
        />
      </div>
      {byProvider.isError ? (
        <ErrorState error={byProvider.error} what="costs" onRetry={() => void byProvider.refetch()} />
      ) : !byProvider.data ? (
        <Loading what="costs" />
      ) : (
        <>
          <Report range={range} byProvider={byProvider.data} onPrice={setPricing} />
          {pricing && <PriceForm key={`${pricing.provider}/${pricing.model}`} target={pricing} onClose={() => setPricing(null)} />}
        </>
      )}
      <BudgetsSection />
      {prices.data && <PriceOverrides prices={prices.data} onPrice={() => setPricing({ provider: "", model: "" })} />}
    </>
  );
}
