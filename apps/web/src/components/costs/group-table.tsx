import type { CostGroup } from "@corral/shared";
import { formatTokens } from "../../lib/format/format.js";
import { CostCell } from "./cost-cell.js";

/** One report grouping (by provider, agent or model) as a table of jobs, tokens and cost. */
export function GroupTable({ title, groups, label }: { title: string; groups: CostGroup[]; label: (g: CostGroup) => string }) {
  return (
    <section className="card" aria-label={title}>
      <h3 style={{ marginTop: 0 }}>{title}</h3>
      {groups.length === 0 ? (
        <p className="muted small">No jobs in this period.</p>
      ) : (
        <div style={{ overflowX: "auto" }}>
          <table className="cards">
            <thead>
              <tr>
                <th>{title.replace(/^By /, "")}</th>
                <th className="num">Jobs</th>
                <th className="num">In</th>
                <th className="num">Out</th>
                <th className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={label(g)}>
                  <td className="mono small">{label(g)}</td>
                  <td data-label="Jobs" className="num">
                    {g.jobs}
                  </td>
                  <td data-label="In" className="num">
                    {formatTokens(g.inputTokens)}
                  </td>
                  <td data-label="Out" className="num">
                    {formatTokens(g.outputTokens)}
                  </td>
                  <td data-label="Cost" className="num">
                    <CostCell t={g} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
