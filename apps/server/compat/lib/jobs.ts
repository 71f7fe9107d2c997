// The worker suites' common parts: a server whose agents run real clients, and one job run over REST.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { isFinalStatus, type Job } from "@corral/shared";
import { afterAll, beforeAll, expect } from "vitest";
import type { FakeServer } from "../../test/fixtures/fake-llm/script.js";
import { api, startServer, until, type TestServer } from "../../test/helpers.js";
import { type Client, clientBin, prepareWorkerHome } from "./clients.js";

export interface WorkerSuite {
  /** The server, once the suite's beforeAll has run. */
  readonly server: TestServer;
  /** Keeps a fake LLM to close after the suite. */
  track<F extends FakeServer>(fake: F): F;
}

/** A Corral server whose built-in agents run these real clients; it and every tracked fake stop after the suite. */
export function workerSuite(clients: Exclude<Client, "mcp-inspector">[]): WorkerSuite {
  let server: TestServer | undefined;
  const fakes: FakeServer[] = [];
  beforeAll(async () => {
    server = await startServer(Object.fromEntries(clients.map((c) => [`CORRAL_${c.toUpperCase()}_BIN`, clientBin(c)])));
    prepareWorkerHome(server.root);
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all(fakes.map((f) => f.close()));
  });
  return {
    get server() {
      if (!server) throw new Error("the worker suite's server is not started yet");
      return server;
    },
    track(fake) {
      fakes.push(fake);
      return fake;
    },
  };
}

/** Launches a job, waits until it has ended (real clients can take a while), and reads its whole output. */
export async function runJob(server: TestServer, agent: string, body: Record<string, unknown>): Promise<{ job: Job; output: string }> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent, ...body });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const job = await until(
    async () => {
      const res = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
      return isFinalStatus(res.body.status) ? res.body : undefined;
    },
    120_000,
    `${agent} job to end`,
  );
  const out = await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${job.id}/output`);
  return { job, output: out.body.chunks.map((c) => c.text).join("") };
}

/** Sets an agent's environment, as users point a CLI at a provider, with a private TMPDIR under the server's root. */
export async function configureAgent(server: TestServer, name: string, env: Record<string, string>): Promise<void> {
  const res = await api(server, "PATCH", `/api/agents/${name}`, { env: { TMPDIR: path.join(server.root, "tmp"), ...env } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The model OpenCode is configured with by {@link opencodeConfig}. */
export const FAKE_OPENCODE_MODEL = "fake/fake-model";

/**
 * OpenCode pointed at a fake OpenAI-compatible server: a provider config kept outside any workdir
 * (so a job's files are only its own), priced, and no network of OpenCode's own. Returns the
 * environment that makes OpenCode (a CLI run, `opencode serve` or `opencode acp`) read it.
 * `permission` is OpenCode's own: "ask" makes it put the question to its client (over ACP).
 */
export function opencodeConfig(
  root: string,
  fakeUrl: string,
  permission: Record<string, string> = { edit: "allow", bash: "allow", webfetch: "deny" },
): Record<string, string> {
  const config = path.join(root, "opencode.json");
  writeFileSync(
    config,
    JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          name: "Fake",
          options: { baseURL: `${fakeUrl}/v1`, apiKey: "fake" },
          models: {
            "fake-model": {
              name: "Fake Model",
              tool_call: true,
              limit: { context: 128000, output: 8192 },
              cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
            },
          },
        },
      },
      permission,
    }),
  );
  return {
    OPENCODE_CONFIG: config,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
  };
}

/** The built-in opencode agent pointed at a fake OpenAI-compatible server ({@link opencodeConfig}). Returns the model to ask for. */
export async function pointOpencodeAt(server: TestServer, fakeUrl: string): Promise<string> {
  await configureAgent(server, "opencode", opencodeConfig(server.root, fakeUrl));
  return FAKE_OPENCODE_MODEL;
}
