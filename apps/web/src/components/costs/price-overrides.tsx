import type { PriceList } from "@corral/shared";
import { useDeletePrice } from "../../hooks/use-costs.js";
import { formatUsd, plural } from "../../lib/format/format.js";

/**
 * The prices a user set (over the shipped table or for models it lacks), each with a Reset that
 * removes it: the table's price, if it has one, applies again, and the jobs are priced again.
 */
export function PriceOverrides({ prices, onPrice }: { prices: PriceList; onPrice: () => void }) {
  const reset = useDeletePrice();
  const overrides = prices.prices.filter((p) => p.origin === "override");
  return (
    <section aria-labelledby="prices-heading">
      <h2 id="prices-heading">Prices you set</h2>
      <p className="small muted">
        The shipped table of {prices.tableDate} prices {plural(prices.prices.length - overrides.length, "model")}; a price you set wins over it.{" "}
        <button type="button" className="link small" onClick={onPrice}>
          Set a price
        </button>
      </p>
      {overrides.length === 0 ? (
        <p className="muted small">None yet.</p>
      ) : (
        <div className="card" style={{ overflowX: "auto" }}>
          <table className="cards" aria-labelledby="prices-heading">
            <thead>
              <tr>
                <th scope="col">Provider / model</th>
                <th scope="col" className="num">
                  Per M input
                </th>
                <th scope="col" className="num">
                  Per M output
                </th>
                <th scope="col" className="num">
                  Per M cached input
                </th>
                <th scope="col">Reset</th>
              </tr>
            </thead>
            <tbody>
              {overrides.map((p) => (
                <tr key={`${p.provider}/${p.model}`}>
                  <td className="mono break-anywhere">
                    {p.provider} / {p.model}
                  </td>
                  <td className="num" data-label="Per M input">
                    {formatUsd(p.inputPerM)}
                  </td>
                  <td className="num" data-label="Per M output">
                    {formatUsd(p.outputPerM)}
                  </td>
                  <td className="num" data-label="Per M cached input">
                    {p.cachedInputPerM === null ? <span className="muted">as input</span> : formatUsd(p.cachedInputPerM)}
                  </td>
                  <td>
                    <button
                      type="button"
                      className="small"
                      disabled={reset.isPending}
                      onClick={() => reset.mutate({ provider: p.provider, model: p.model })}
                      aria-label={`Reset the price of ${p.provider} / ${p.model}`}
                    >
                      Reset
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {reset.error && (
        <div className="alert" role="alert">
          The price was not reset: {reset.error.message}
        </div>
      )}
    </section>
  );
}
