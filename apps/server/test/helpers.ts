import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildApp, type BuildOptions, type CorralApp } from "../src/app.js";
import { loadConfig, type AppConfig } from "../src/config.js";
import { registryEnv } from "./postgres.js";
import type { OutputPage } from "@corral/shared";
import { setTimeout as sleep } from "node:timers/promises";

export const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
export const fakeBinDir = path.join(fixturesDir, "bin");

export interface TestServer extends CorralApp {
  url: string;
  root: string;
  dataDir: string;
  /** Authorization header for requests. */
  auth: { authorization: string };
  close(): Promise<void>;
}

/** Removes a test's temp root, retrying while a worker that outlived its server still writes into it. */
async function removeWhenSettled(root: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      rmSync(root, { recursive: true, force: true });
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOTEMPTY" && code !== "EBUSY") || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

/** A temp dir that is removed when the test's server closes (or by the caller). */
export function tempDir(prefix = "corral-test-"): string {
  return realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** A real server on a real port, with its own data dir and the fake CLIs first on PATH. */
export async function startServer(
  env: Record<string, string> = {},
  options: { dataDir?: string; root?: string; logStream?: BuildOptions["logStream"]; config?: (config: AppConfig) => AppConfig } = {},
): Promise<TestServer> {
  const root = options.root ?? tempDir();
  const dataDir = options.dataDir ?? path.join(root, "data");
  const config = loadConfig({
    ...process.env,
    HOME: root,
    PATH: `${fakeBinDir}${path.delimiter}${process.env.PATH ?? ""}`,
    CORRAL_DATA_DIR: dataDir,
    CORRAL_WORKDIR_ROOTS: root,
    CORRAL_PORT: "0",
    CORRAL_LOG_LEVEL: "silent",
    CORRAL_KILL_GRACE_MS: "500",
    CORRAL_TOKEN: "test-token-0123456789",
    ...(await registryEnv(dataDir)),
    ...env,
  });
  const corral = await buildApp(options.config?.(config) ?? config, { logStream: options.logStream });
  await corral.app.listen({ host: "127.0.0.1", port: 0 });
  const address = corral.app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    ...corral,
    url: `http://127.0.0.1:${port}`,
    root,
    dataDir,
    auth: { authorization: `Bearer ${corral.token}` },
    async close() {
      await corral.app.close();
      // Workers outlive the server by design: one ending as it closes still writes its exit file,
      // and a removal racing it meets ENOTEMPTY (CI, security.test.ts: past Node's own 1.5 s of
      // retries on a loaded machine). Retried until the worker is done writing, 20 s at most.
      if (!options.root) await removeWhenSettled(root);
    },
  };
}

export async function api<T = unknown>(
  server: Pick<TestServer, "url" | "auth">,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { ...server.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Signs a browser in the way the panel does (`/?token=`), returning its `Cookie` header value. */
export async function signIn(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/?token=${server.token}`, { redirect: "manual" });
  if (res.status !== 302) throw new Error(`sign-in answered ${res.status}`);
  return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

export { sleep };

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Kills a worker's whole process group. A pid not (yet) recorded is refused loudly: negated, a
 * null is -0, and kill(0) would take the test runner's own group (vitest, pnpm, CI) with it.
 */
export function killGroupOf(pid: number | null | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 1) throw new Error(`no worker group to kill: pid ${pid}`);
  process.kill(-pid, signal);
}

/** Waits until job `id` has a worker pid recorded, and returns it. */
export async function workerPid(server: Pick<TestServer, "services">, id: string): Promise<number> {
  return until(async () => (await server.services.jobs.get(id)).pid ?? undefined, 15_000, `job ${id}'s worker pid`);
}

/** Waits until job `id`'s output holds `text`. */
export async function printed(server: TestServer, id: string, text: string): Promise<void> {
  await until(
    async () => {
      const page = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output?cursor=0`);
      return page.body.chunks.some((c) => c.text.includes(text)) ? true : undefined;
    },
    15_000,
    `job ${id} printing ${text}`,
  );
}
