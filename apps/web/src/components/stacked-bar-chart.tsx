import { useRef } from "react";
import { useElementWidth } from "../hooks/use-element-width.js";
import { labelStride, niceTicks } from "../lib/domain/chart-scale.js";

export interface ChartSeries {
  key: string;
  label: string;
  /** A CSS colour; `var(--series-N)` follows the theme. */
  colour: string;
}

export interface ChartBar {
  key: string;
  /** Under the bar; short. */
  label: string;
  /** In the bar's tooltip; may be longer than the label. */
  title: string;
  values: Record<string, number>;
}

const MARGIN = { top: 8, right: 8, bottom: 24, left: 64 };
const LABEL_WIDTH = 44;
const MAX_BAR = 48;

/**
 * Bars of stacked series, drawn as plain SVG to the width of its box. Screen readers get
 * `description` (the chart is one image to them); pointers get a tooltip per bar naming each part.
 */
export function StackedBarChart({
  bars,
  series,
  description,
  formatValue,
  height = 240,
}: {
  bars: ChartBar[];
  series: ChartSeries[];
  description: string;
  formatValue: (v: number) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const width = useElementWidth(box);
  const totals = bars.map((b) => series.reduce((sum, s) => sum + (b.values[s.key] ?? 0), 0));
  const ticks = niceTicks(totals.reduce((max, t) => Math.max(max, t), 0));
  const top = ticks.at(-1) || 1;
  const plotW = Math.max(1, width - MARGIN.left - MARGIN.right);
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const slot = plotW / Math.max(1, bars.length);
  const barW = Math.max(1, Math.min(MAX_BAR, slot * 0.7));
  const stride = labelStride(slot, LABEL_WIDTH);
  const y = (v: number) => MARGIN.top + plotH - (v / top) * plotH;

  return (
    <div ref={box} className="bar-chart">
      <svg width={width} height={height} role="img" aria-label={description}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={MARGIN.left} x2={width - MARGIN.right} y1={y(t)} y2={y(t)} className="grid-line" />
            <text x={MARGIN.left - 6} y={y(t)} dy="0.32em" textAnchor="end" className="axis-label">
              {formatValue(t)}
            </text>
          </g>
        ))}
        {bars.map((bar, i) => {
          const x = MARGIN.left + i * slot + (slot - barW) / 2;
          let base = 0;
          const parts = series.filter((s) => (bar.values[s.key] ?? 0) > 0);
          const title = [
            `${bar.title}: ${formatValue(totals[i] ?? 0)}`,
            ...parts.map((s) => `${s.label} ${formatValue(bar.values[s.key] ?? 0)}`),
          ].join("\n");
          return (
            <g key={bar.key}>
              <title>{title}</title>
              {/* The whole column answers the pointer, so quiet days and thin parts show their tooltip too. */}
              <rect x={MARGIN.left + i * slot} y={MARGIN.top} width={slot} height={plotH} fill="transparent" />
              {parts.map((s) => {
                const v = bar.values[s.key] ?? 0;
                const y0 = y(base);
                base += v;
                const y1 = y(base);
                return <rect key={s.key} x={x} y={y1} width={barW} height={Math.max(1, y0 - y1)} style={{ fill: s.colour }} />;
              })}
              {i % stride === 0 && (
                <text x={x + barW / 2} y={height - 6} textAnchor="middle" className="axis-label">
                  {bar.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
