import { shellQuote } from "../format/format.js";

/** What stands for the token on screen until it is revealed (screen sharing, recordings). */
export const maskedToken = "••••••••••••••••";

/** The `claude mcp add` command for one mount, with the token given (the real one to copy, the mask to show). */
export function mcpAddCommand(name: string, url: string, token: string): string {
  // Quoted for the shell as needed: a query's `&`, an IPv6 host's brackets, whatever Host the server was reached by.
  return `claude mcp add --transport http ${name} ${shellQuote(url)} --header ${shellQuote(`Authorization: Bearer ${token}`)}`;
}

/** `/mcp` with the toolsets and launch options picked: `?toolsets=hub,costs&options=all`. */
export function mcpUrlWith(mcpUrl: string, toolsets: string[], allOptions: boolean): string {
  const query = [...(toolsets.length ? [`toolsets=${toolsets.join(",")}`] : []), ...(allOptions ? ["options=all"] : [])].join("&");
  return query ? `${mcpUrl}?${query}` : mcpUrl;
}

/**
 * Permissions for ~/.claude/settings.json: Claude Code asks before each MCP tool call unless the
 * tool is allowed; `mcp__<server>__*` allows every tool of one server.
 */
export function permissionsSnippet(agents: string[]): string {
  const allow = ["mcp__corral__*", ...agents.map((a) => `mcp__${a}__*`)];
  return JSON.stringify({ permissions: { allow } }, null, 2);
}
