/**
 * The value axis of a bar chart: ticks at 1, 2 or 5 × a power of ten, from 0 to the first tick at
 * or above the largest bar, about `count` of them.
 */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  const ticks: number[] = [];
  // Rounded to the step's own precision, so 0.1 + 0.2 shows as 0.3.
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  for (let i = 0; ticks.length === 0 || (ticks.at(-1) ?? 0) < max; i++) ticks.push(Number((i * step).toFixed(digits)));
  return ticks;
}

/** Every how many bars a label fits, when each label needs `labelWidth` px and a bar gets `barWidth`. */
export function labelStride(barWidth: number, labelWidth: number): number {
  return Math.max(1, Math.ceil(labelWidth / Math.max(barWidth, 1)));
}
