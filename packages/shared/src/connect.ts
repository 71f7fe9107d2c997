import { z } from "zod";

/** What the panel's Connect page needs to wire an MCP client to this server. */
export const ConnectInfoSchema = z.object({
  /** The bearer token every door accepts; shown only to a caller that already holds it. */
  token: z.string(),
  /** Base URL as the caller reached the server, e.g. http://127.0.0.1:7433. */
  baseUrl: z.string(),
  /** The mount with every agent plus the corral tools. */
  mcpUrl: z.string(),
  /** What `/mcp?toolsets=` adds to the delegating tools, in the order to offer them. */
  toolsets: z.array(z.object({ name: z.string(), about: z.string(), tools: z.array(z.string()) })),
  /** One mount per agent, so its tools keep the `mcp__<agent>__*` names. */
  mounts: z.array(z.object({ agent: z.string(), url: z.string(), enabled: z.boolean() })),
  /** Directories under which workers may run and write. */
  workdirRoots: z.array(z.string()),
});
export type ConnectInfo = z.infer<typeof ConnectInfoSchema>;
