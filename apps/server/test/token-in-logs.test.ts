import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { isFinalStatus } from "@corral/shared";
import { fakeBinDir, tempDir, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { startServerProcess } from "./server-process.js";
import { WsClient } from "./ws-client.js";

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!hasScript) console.log("skipping the terminal banner test: the script program (util-linux) is not installed");

test("the token is in no line the server writes at trace level: token exchange, MCP, WebSocket, wrong tokens, a job", async () => {
  const server = await startServerProcess(root, { CORRAL_LOG_LEVEL: "trace" });
  const dataDir = path.join(root, "data");
  const token = readFileSync(path.join(dataDir, "token"), "utf8").trim();
  const url = `http://127.0.0.1:${server.port}`;
  const auth = { authorization: `Bearer ${token}` };
  let jobId = "";
  try {
    const exchange = await fetch(`${url}/?token=${token}`, { redirect: "manual" });
    expect(exchange.status).toBe(302);
    const cookie = exchange.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect((await fetch(`${url}/api/jobs`, { headers: { cookie } })).status).toBe(200);
    for (const wrong of [{ authorization: `Bearer ${token}x` }, { cookie: `${cookie}x` }] as Record<string, string>[]) {
      expect((await fetch(`${url}/api/jobs`, { headers: wrong })).status).toBe(401);
    }
    expect((await fetch(`${url}/?token=${token.slice(1)}`, { redirect: "manual" })).status).not.toBe(302);

    const ws = await WsClient.open({ url, auth });
    ws.send({ type: "subscribe_jobs" });
    await ws.waitFor("subscribed");
    const mcp = await connectMcp({ url, auth });
    const workdir = path.join(root, "w");
    mkdirSync(workdir);
    jobId = textOf(await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "hello", workdir } }));
    await until(async () => {
      const res = await fetch(`${url}/api/jobs/${jobId}`, { headers: auth });
      return isFinalStatus(((await res.json()) as Job).status) ? true : undefined;
    });
    await mcp.close();
    await ws.close();
    // Something at error level too: a request whose answer is a failure.
    expect((await fetch(`${url}/mcp`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{" })).status).toBe(400);
  } finally {
    expect(await server.stop()).toBe(0);
  }

  const output = server.stdout() + server.stderr();
  expect(output).toContain(`job ${jobId} ended`);
  expect(output).not.toContain(token);
  // stdout is a pipe here, as under a service manager or `> corral.log`: the banner says where the token is.
  expect(server.stdout()).toContain(`Open:  ${url}/?token=<token>  (the token is in the file ${path.join(dataDir, "token")}`);
  // Apart from the banner, every line is a JSON log line.
  const banner = /^(Corral is running\.| {2}(Open|MCP|Data|Registry|Node):|$)/;
  for (const line of server
    .stdout()
    .split("\n")
    .filter((l) => !banner.test(l)))
    expect(() => JSON.parse(line), line).not.toThrow();
});

test.skipIf(!hasScript)("on a terminal the banner shows the URL with the token, ready to open", async () => {
  const home = path.join(root, "tty");
  const token = "tty-banner-token-0123456789";
  const entry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/server.ts");
  const command = [process.execPath, "--import", "tsx", "--conditions=corral-source", entry].map((a) => `'${a}'`).join(" ");
  // script(1) gives the server a pseudo-terminal as stdout, as a person's shell does.
  const child = spawn("script", ["-qefc", `exec ${command}`, "/dev/null"], {
    env: {
      ...process.env,
      HOME: home,
      PATH: `${fakeBinDir}${path.delimiter}${process.env.PATH ?? ""}`,
      CORRAL_DATA_DIR: path.join(home, "data"),
      CORRAL_WORKDIR_ROOTS: home,
      CORRAL_PORT: "0",
      CORRAL_TOKEN: token,
      CORRAL_LOG_LEVEL: "warn",
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    await until(() => (out.includes("MCP:") ? true : undefined), 20_000, "the banner");
    expect(out).toMatch(new RegExp(`Open: {2}http://127\\.0\\.0\\.1:\\d+/\\?token=${token}\\r?\\n`));
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
});
