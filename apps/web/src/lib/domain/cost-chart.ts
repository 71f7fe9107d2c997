import { localDay, type CostReport } from "@corral/shared";

export interface CostRange {
  /** `YYYY-MM-DD`, inclusive. */
  from: string;
  /** `YYYY-MM-DD`, inclusive (the server counts a date as its whole day). */
  to: string;
}

export interface CostChartData {
  /** Every day of the range, quiet ones too, with each provider's cost (priced jobs only). */
  days: { day: string; costs: Record<string, number>; total: number }[];
  /** Providers with a cost in the range, by name: the stack order and the legend. */
  providers: { provider: string; total: number }[];
}

/** Every day of the range, so the chart shows quiet days as empty rather than skipping them. */
export function daysOf(range: CostRange): string[] {
  const out: string[] = [];
  const [fy, fm, fd] = range.from.split("-").map(Number) as [number, number, number];
  const d = new Date(fy, fm - 1, fd);
  for (let i = 0; i < 400 && localDay(d) <= range.to; i++) {
    out.push(localDay(d));
    d.setDate(d.getDate() + 1);
  }
  return out;
}

/**
 * A report grouped by day and provider, as stacked bars. A provider whose jobs cost nothing (or
 * are all unpriced) has nothing to stack and stays out of the legend.
 */
export function costChart(report: CostReport, range: CostRange): CostChartData {
  const byDay = new Map(daysOf(range).map((day) => [day, { day, costs: {} as Record<string, number>, total: 0 }]));
  const totals = new Map<string, number>();
  for (const g of report.groups) {
    const row = byDay.get(g.day ?? "");
    const cost = g.costUsd ?? 0;
    if (!row || cost <= 0) continue;
    const provider = g.provider ?? "unknown";
    row.costs[provider] = (row.costs[provider] ?? 0) + cost;
    row.total += cost;
    totals.set(provider, (totals.get(provider) ?? 0) + cost);
  }
  const providers = [...totals].map(([provider, total]) => ({ provider, total })).sort((a, b) => a.provider.localeCompare(b.provider));
  return { days: [...byDay.values()], providers };
}
