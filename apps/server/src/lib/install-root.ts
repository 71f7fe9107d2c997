import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where Corral runs from: its checkout, or the installed package (`pnpm package`), which keeps the
 * checkout's layout for what the server reads at run time (apps/server/dist/, the spawner,
 * drizzle/, drizzle-pg/, apps/web/dist/). The server runs as sources (src/…, under tsx) or as a
 * bundle (dist/server.js and its chunks), at different depths, so the root is found by its marker
 * rather than by a relative path: the server package's package.json below it.
 */
export const installRoot = findInstallRoot(path.dirname(fileURLToPath(import.meta.url)));

function findInstallRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "apps/server/package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no apps/server/package.json above ${from}: Corral runs from its checkout or its package`);
  }
}
