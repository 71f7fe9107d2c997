// `pnpm package`: Corral as one npm package, installable without a checkout (`npm install -g` of
// the tarball, or `npx`), with one bin, `corral` (`corral serve`, `corral runner`, `corral run`…).
// It keeps the checkout's layout for what the server reads at run time (lib/install-root.ts), so
// the built server runs from it exactly as from a checkout. Nothing is published from here.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { parse } from "yaml";
import { serverBuildOptions } from "./build.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");

/** What the server reads at run time besides its bundle, from git at their places in the checkout. */
const TRACKED = ["apps/server/src/jobs/spawner.mjs", "apps/server/src/runner/runner-role.sql", "drizzle", "drizzle-pg", "docs", "README.md"];

/** The built panel: vite's output, not tracked; a dot-file there is no build's. */
const PANEL = "apps/web/dist";

/** Files git tracks under `paths`: an untracked file beside them (a .env, notes) is never packed. */
function trackedFiles(paths: string[]): string[] {
  return execFileSync("git", ["ls-files", "-z", "--", ...paths], { cwd: repo, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
}

/** The bundle's one dependency left outside it: better-sqlite3 loads its native addon from its own folder. */
function catalogVersion(name: string): string {
  const workspace = parse(readFileSync(path.join(repo, "pnpm-workspace.yaml"), "utf8")) as { catalog: Record<string, string> };
  const version = workspace.catalog[name];
  if (!version) throw new Error(`${name} is not in pnpm-workspace.yaml's catalog`);
  return version;
}

/** Builds the package's contents into `stage` (emptied first) and returns its package.json. */
export async function stagePackage(stage: string): Promise<{ name: string; version: string }> {
  if (!existsSync(path.join(repo, "apps/web/dist/index.html"))) throw new Error("the panel is not built: run pnpm build first");
  rmSync(stage, { recursive: true, force: true });
  // No source maps: they would carry every source and the packer's own paths, for stack traces
  // that name bundle positions instead.
  await build({ ...serverBuildOptions(path.join(stage, "apps/server/dist")), sourcemap: false, logLevel: "warning" });
  for (const rel of trackedFiles(TRACKED)) cpSync(path.join(repo, rel), path.join(stage, rel));
  cpSync(path.join(repo, PANEL), path.join(stage, PANEL), { recursive: true, filter: (from) => !path.basename(from).startsWith(".") });
  const server = JSON.parse(readFileSync(path.join(here, "package.json"), "utf8")) as { version: string };
  // The install root's marker, and what makes Node read the bundle's .js files as ES modules.
  writeFileSync(
    path.join(stage, "apps/server/package.json"),
    `${JSON.stringify({ name: "@corral/server", version: server.version, private: true, type: "module" }, null, 2)}\n`,
  );
  const manifest = {
    name: "corral",
    version: server.version,
    description:
      "A self-hosted control plane for AI coding agents: delegate to Claude Code, Codex, OpenCode, Gemini, Copilot, ACP agents and models as MCP tools, and watch, review and cancel their jobs in a web panel.",
    type: "module",
    bin: { corral: "apps/server/dist/corral.js" },
    engines: { node: ">=20.19" },
    os: ["linux", "darwin"],
    dependencies: { "better-sqlite3": catalogVersion("better-sqlite3") },
    keywords: ["mcp", "ai", "agents", "claude-code", "codex", "orchestration", "acp"],
    // The team has not chosen a licence yet: UNLICENSED until it does (npm publishes it as such).
    license: "UNLICENSED",
  };
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Stages the package and packs it into `destination`; returns the tarball's path. */
export async function packPackage(destination: string): Promise<string> {
  const stage = mkdtempSync(path.join(os.tmpdir(), "corral-package-"));
  try {
    await stagePackage(stage);
    mkdirSync(destination, { recursive: true });
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", path.resolve(destination)], { cwd: stage, encoding: "utf8" });
    const [packed] = JSON.parse(out) as { filename: string }[];
    if (!packed) throw new Error(`npm pack printed no file: ${out}`);
    return path.join(path.resolve(destination), packed.filename);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tarball = await packPackage(process.argv[2] ?? ".");
  process.stdout.write(
    `${tarball}\nInstall it (better-sqlite3 builds its native addon, which npm 11 runs only when allowed):\n` +
      `  npm install -g --allow-scripts=better-sqlite3 ${tarball}\n  corral serve\n`,
  );
}
