import { useAgentMutations } from "../hooks/use-agents.js";
import type { ErrorAction } from "../lib/domain/api-errors.js";
import { Link } from "../router.js";

/**
 * What the panel offers beside a refusal it cannot place under a field: the used-up budget, or
 * *Enable* for a disabled agent. `then`: what enabling goes on to do ("and relaunch"), said on the button.
 */
export function ErrorActionView({ action, onEnabled, then }: { action: ErrorAction | undefined; onEnabled: () => void; then?: string }) {
  const { update } = useAgentMutations();
  if (action?.kind === "open-budget") return <Link to={action.href}>Open the budget on the Costs page</Link>;
  if (action?.kind === "enable-agent") {
    return (
      <button
        type="button"
        className="small"
        disabled={update.isPending}
        onClick={() => update.mutate({ name: action.agent, body: { enabled: true } }, { onSuccess: onEnabled })}
      >
        Enable {action.agent}
        {then ? ` ${then}` : ""}
      </button>
    );
  }
  return null;
}
