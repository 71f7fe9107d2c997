import { useMemo } from "react";
import type { CostRange } from "../../api/costs.js";
import { useCostReport } from "../../hooks/use-costs.js";
import { costChart } from "../../lib/domain/cost-chart.js";
import { providerColour } from "../../lib/domain/provider-colours.js";
import { formatUsd } from "../../lib/format/format.js";
import { StackedBarChart } from "../stacked-bar-chart.js";
import { EmptyState, Loading } from "../states.js";

/** Cost per provider per day, stacked; its legend names only the providers that cost something. */
export function CostChart({ range, jobs }: { range: CostRange; jobs: number }) {
  const daily = useCostReport(range, ["day", "provider"]);
  const chart = useMemo(() => (daily.data ? costChart(daily.data, range) : null), [daily.data, range]);
  const series = useMemo(
    () => chart?.providers.map((p) => ({ key: p.provider, label: p.provider, colour: providerColour(p.provider) })) ?? [],
    [chart],
  );
  const body = () => {
    if (jobs === 0) return <EmptyState title="No jobs in this period">Costs appear as workers report usage.</EmptyState>;
    if (!chart) return <Loading what="the chart" />;
    if (chart.providers.length === 0)
      return <EmptyState title="No priced cost in this period">The jobs here are unpriced or reported no usage; see the tables below.</EmptyState>;
    const description = `Bar chart of cost per provider per day, ${range.from} to ${range.to}: ${chart.providers
      .map((p) => `${p.provider} ${formatUsd(p.total)}`)
      .join(", ")}.`;
    return (
      <div className="card">
        <StackedBarChart
          bars={chart.days.map((d) => ({ key: d.day, label: d.day.slice(5), title: d.day, values: d.costs }))}
          series={series}
          description={description}
          formatValue={formatUsd}
        />
        <ul className="chart-legend" aria-label="Providers">
          {chart.providers.map((p) => (
            <li key={p.provider}>
              <span className="swatch" style={{ background: providerColour(p.provider) }} aria-hidden="true" />
              <span className="mono">{p.provider}</span> <span className="muted">{formatUsd(p.total)}</span>
            </li>
          ))}
        </ul>
        <details className="small">
          <summary>The chart as a table</summary>
          <table>
            <thead>
              <tr>
                <th>Day</th>
                {chart.providers.map((p) => (
                  <th key={p.provider} className="num">
                    {p.provider}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {chart.days
                .filter((d) => d.total > 0)
                .map((d) => (
                  <tr key={d.day}>
                    <td>{d.day}</td>
                    {chart.providers.map((p) => (
                      <td key={p.provider} className="num">
                        {formatUsd(d.costs[p.provider] ?? 0)}
                      </td>
                    ))}
                  </tr>
                ))}
            </tbody>
          </table>
        </details>
      </div>
    );
  };
  return (
    <section aria-labelledby="chart-heading">
      <h2 id="chart-heading">Cost per provider per day</h2>
      {body()}
    </section>
  );
}
