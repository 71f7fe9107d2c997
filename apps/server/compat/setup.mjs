#!/usr/bin/env node
// Installs the pinned real clients the compat suite drives into .compat-clients/ (outside
// node_modules, gitignored), and does nothing when they are already there at those versions.
// The AI CLIs come from the fixtures' setup-clis.sh, so the suite and the captured samples use the
// same pins; the MCP Inspector is added beside them.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const clientsDir = path.join(repo, ".compat-clients");

/** Package → pinned version. Claude Code, Gemini CLI and OpenCode pins match setup-clis.sh. */
const PINS = {
  "@anthropic-ai/claude-code": "2.1.197",
  "@google/gemini-cli": "0.61.0",
  "opencode-ai": "1.18.33",
  "@openai/codex": "0.171.0",
  // The last Inspector that runs on Node 20 (0.16+ needs Node 22).
  "@modelcontextprotocol/inspector": "0.15.0",
};

function installedVersion(pkg) {
  const file = path.join(clientsDir, "node_modules", pkg, "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : null;
}

const missing = () => Object.entries(PINS).filter(([pkg, version]) => installedVersion(pkg) !== version);

if (missing().length === 0) {
  process.stdout.write(`▸ Compat clients ready in ${path.relative(repo, clientsDir)}/\n`);
} else {
  const started = Date.now();
  process.stdout.write(
    `▸ Installing the pinned clients into ${path.relative(repo, clientsDir)}/ (${missing()
      .map(([p, v]) => `${p}@${v}`)
      .join(", ")})\n`,
  );
  // npm init cannot name a package after a dot-directory, so the manifest is written here.
  mkdirSync(clientsDir, { recursive: true });
  const manifest = path.join(clientsDir, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: "corral-compat-clients", private: true }, null, 2)}\n`);
  execFileSync(path.join(repo, "apps/server/test/fixtures/scripts/setup-clis.sh"), [clientsDir], { stdio: "inherit" });
  const inspector = "@modelcontextprotocol/inspector";
  execFileSync("npm", ["install", "--no-audit", "--no-fund", `${inspector}@${PINS[inspector]}`], { cwd: clientsDir, stdio: "inherit" });
  const still = missing();
  if (still.length > 0) {
    process.stderr.write(`Could not install: ${still.map(([p, v]) => `${p}@${v} (found ${installedVersion(p) ?? "none"})`).join(", ")}\n`);
    process.exit(1);
  }
  process.stdout.write(`▸ Installed in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
