import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { installRoot } from "../../lib/install-root.js";

/**
 * How to start Corral's ACP client (client-main.ts) with this Node: the built server runs its
 * bundle (dist/acp-client.js, built beside dist/server.js); the sources (`pnpm dev`, the tests)
 * run the TypeScript file under tsx, as they run themselves, so it never lags behind a change.
 * tsx is given the server's tsconfig: it would otherwise read one from the current directory,
 * the workdir, where a worker's `paths` could redirect the client's own imports (its permission policy).
 */
export function acpClientCommand(): { command: string; args: string[]; env: Record<string, string> } {
  const here = fileURLToPath(import.meta.url);
  if (here.split(path.sep).includes("dist"))
    return { command: process.execPath, args: [path.join(installRoot, "apps/server/dist/acp-client.js")], env: {} };
  const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm")).href;
  return {
    command: process.execPath,
    args: ["--conditions=corral-source", "--import", tsx, path.join(installRoot, "apps/server/src/agents/acp/client-main.ts")],
    env: { TSX_TSCONFIG_PATH: path.join(installRoot, "apps/server/tsconfig.json") },
  };
}
