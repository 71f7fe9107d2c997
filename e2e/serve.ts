/**
 * The e2e server: a fake Ollama, then the built Corral (apps/server/dist) with the fake CLIs
 * first on PATH, a temp data dir and a temp workdir root. Playwright starts this as its
 * webServer and stops it (SIGTERM) at the end; everything temporary is removed then.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeOllama } from "../apps/server/test/fixtures/fake-ollama.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const serverJs = path.join(repo, "apps/server/dist/server.js");
const panel = path.join(repo, "apps/web/dist/index.html");
if (!existsSync(serverJs) || !existsSync(panel)) {
  process.stderr.write("The e2e tests run against the built server and panel: run `pnpm build` first.\n");
  process.exit(1);
}

const root = process.env.CORRAL_E2E_ROOT;
const port = process.env.CORRAL_E2E_PORT;
const token = process.env.CORRAL_E2E_TOKEN;
if (!root || !port || !token) throw new Error("run through playwright.config.ts, which sets CORRAL_E2E_ROOT, _PORT and _TOKEN");
mkdirSync(path.join(root, "work"), { recursive: true });

const ollama = await startFakeOllama([
  {
    name: "qwen2.5:7b",
    capabilities: ["completion", "tools"],
    contextLength: 32768,
    family: "qwen2",
    parameterSize: "7.6B",
    quantization: "Q4_K_M",
    size: 4_700_000_000,
    loadedVram: 5_100_000_000,
  },
  {
    name: "llava:13b",
    capabilities: ["completion", "vision"],
    contextLength: 4096,
    family: "llama",
    parameterSize: "13B",
    quantization: "Q4_0",
    size: 8_000_000_000,
  },
  {
    name: "nomic-embed-text",
    capabilities: ["embedding"],
    contextLength: 2048,
    family: "nomic-bert",
    parameterSize: "137M",
    quantization: "F16",
    size: 274_000_000,
  },
  {
    name: "gpt-oss:120b-cloud",
    capabilities: ["completion", "tools", "thinking"],
    contextLength: 131072,
    family: "gptoss",
    parameterSize: "116.8B",
    quantization: "MXFP4",
    remote: true,
  },
]);
ollama.script("qwen2.5:7b", (_body, turn) =>
  turn === 0 ? { toolCalls: [{ name: "write_file", arguments: { path: "notes.md", content: "# from qwen\n" } }] } : { content: "wrote notes.md" },
);

const server = spawn(process.execPath, [serverJs], {
  stdio: "inherit",
  env: {
    ...process.env,
    HOME: root,
    PATH: `${path.join(repo, "apps/server/test/fixtures/bin")}${path.delimiter}${process.env.PATH ?? ""}`,
    CORRAL_PORT: port,
    CORRAL_TOKEN: token,
    CORRAL_DATA_DIR: path.join(root, "data"),
    CORRAL_WORKDIR_ROOTS: root,
    CORRAL_OLLAMA_URL: ollama.url,
    CORRAL_KILL_GRACE_MS: "1000",
    CORRAL_LOG_LEVEL: "warn",
  },
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  server.kill("SIGTERM");
  await new Promise((resolve) => (server.exitCode !== null ? resolve(null) : server.once("exit", resolve)));
  await ollama.close();
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
};
server.once("exit", (code) => {
  if (!stopping) {
    process.stderr.write(`corral exited with ${code}\n`);
    void ollama.close().then(() => process.exit(code ?? 1));
  }
});
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
