// The built server and `corral` command (esbuild, as `pnpm build` bundles them) in a folder of their
// own for one test file. It is inside the checkout (under node_modules, which git and the linter
// skip), because the built server finds its migrations, panel and version from where it sits, as
// dist/ does (lib/install-root.ts).
import { mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { serverBuildOptions } from "../build.js";

export const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Builds into a new folder and returns it (`corral.js`, `server.js`… in it); the caller removes it. */
export async function buildCorral(): Promise<string> {
  const builds = path.join(checkout, "node_modules/.cache/corral-test-builds");
  mkdirSync(builds, { recursive: true });
  const outdir = mkdtempSync(path.join(builds, "build-"));
  await build({ ...serverBuildOptions(outdir), logLevel: "silent" });
  return outdir;
}
