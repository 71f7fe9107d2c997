// The worker suites' common parts: a server whose agents run real clients, and one job run over REST.
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
