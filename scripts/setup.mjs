#!/usr/bin/env node
// One-step set-up: pnpm, dependencies (better-sqlite3 compiled when no prebuilt binary can be
// downloaded), and a build of the server and the panel. Safe to run again.
import { execFileSync, execSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const PNPM = "12.4.2";
const step = (text) => process.stdout.write(`\n▸ ${text}\n`);
const run = (cmd, env = process.env) => execSync(cmd, { stdio: "inherit", env });

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`Corral needs Node.js 20.19 or newer; this is ${process.version}. Install a current Node.js LTS and run this again.`);
  process.exit(1);
}

let pnpmVersion = null;
try {
  pnpmVersion = execFileSync("pnpm", ["--version"], { encoding: "utf8" }).trim();
} catch {
  // Not installed.
}
if (!pnpmVersion) {
  step(`Installing pnpm ${PNPM} (npm install -g pnpm@${PNPM})`);
  run(`npm install -g pnpm@${PNPM}`);
}

// node-gyp needs Node's headers to compile better-sqlite3; use the ones shipped beside this node
// (Debian's /usr/include/node, nvm's include/node) instead of downloading them.
const env = { ...process.env };
const nodeDir = path.dirname(path.dirname(process.execPath));
if (!env.npm_config_nodedir && existsSync(path.join(nodeDir, "include", "node", "node.h"))) env.npm_config_nodedir = nodeDir;

step("Installing dependencies (pnpm install)");
run("pnpm install --frozen-lockfile", env);
step("Building the server and the control panel (pnpm build)");
run("pnpm build", env);
step("Ready. Start Corral with: pnpm start");
