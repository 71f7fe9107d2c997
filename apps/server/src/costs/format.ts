/** $0.0129, $0.01, $12.5: enough digits to tell small amounts apart, no trailing zeros. */
export const usd = (n: number) => `$${Number(n.toFixed(n < 1 ? 4 : 2))}`;
