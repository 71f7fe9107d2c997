import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The checkout Corral runs from (drizzle/, apps/web/ sit in it). The server runs as sources
 * (src/…, under tsx) or as a bundle (dist/server.js and its chunks), at different depths, so the
 * root is found by its marker file rather than by a relative path.
 */
export const repoRoot = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no pnpm-workspace.yaml above ${from}: Corral runs from its checkout`);
  }
}
