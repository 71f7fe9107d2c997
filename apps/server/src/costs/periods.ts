import { localDay, type BudgetPeriod } from "@corral/shared";

/** The current day or month in the server's local time, as [start, end) in ms. */
export function periodWindow(period: BudgetPeriod, now = Date.now()): { start: number; end: number } {
  const d = new Date(now);
  if (period === "day") {
    const start = new Date(d.getFullYear(), d.getMonth(), d.getDate());
    const end = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1);
    return { start: start.getTime(), end: end.getTime() };
  }
  const start = new Date(d.getFullYear(), d.getMonth(), 1);
  const end = new Date(d.getFullYear(), d.getMonth() + 1, 1);
  return { start: start.getTime(), end: end.getTime() };
}

export function localTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${localDay(ms)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A query time: a `YYYY-MM-DD` local day (its start, or its end when `endOfDay`) or ms. */
export function parseTime(value: string | number, endOfDay: boolean): number {
  if (typeof value === "number") return value;
  const [y, m, d] = value.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, d + (endOfDay ? 1 : 0)).getTime();
}
