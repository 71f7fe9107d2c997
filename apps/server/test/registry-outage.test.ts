// A registry in PostgreSQL that goes away (a restart, the network) and comes back: the server
// answers what it can, says why it cannot, and carries on once PostgreSQL is reachable again.
import net from "node:net";
import path from "node:path";
import type { Job } from "@corral/shared";
import { afterAll, describe, expect, test } from "vitest";
import { api, sleep, startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { usePostgres } from "./postgres.js";

const postgres = usePostgres();

/** A TCP relay to PostgreSQL that a test can cut (every connection reset, new ones refused) and mend. */
async function cuttableRelay(target: URL) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return client.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.pipe(b);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        sockets.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    mend() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!postgres.available)("the registry's PostgreSQL goes away and comes back", () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  test("REST answers 503 saying what is wrong, health still answers, a job that ended meanwhile is stored, and everything works again once it is back", async () => {
    const relay = await cuttableRelay(new URL(await postgres.database()));
    try {
      server = await startServer({ CORRAL_DATABASE_URL: relay.url });
      const mcp = await connectMcp(server);
      const launch = (prompt: string) =>
        api<Job>(server!, "POST", "/api/jobs", { agent: "kiro", prompt, workdir: path.join(server!.root, prompt.replace(/\W/g, "")) });
      const first = await launch("print before");
      expect(first.status).toBe(201);
      await until(async () => ((await api<Job>(server!, "GET", `/api/jobs/${first.body.id}`)).body.endedAt ? true : undefined));

      // A job whose worker ends while the registry is away: its end is stored once it is back.
      const during = await launch("sleep 1\nprint ended while away");
      expect(during.status).toBe(201);
      await until(async () => ((await api<Job>(server!, "GET", `/api/jobs/${during.body.id}`)).body.status === "running" ? true : undefined));

      relay.cut();
      const listed = await api<{ error: string; code: string }>(server, "GET", "/api/jobs");
      expect(listed.status).toBe(503);
      expect(listed.body.code).toBe("unavailable");
      expect(listed.body.error).toMatch(/PostgreSQL at CORRAL_DATABASE_URL\) cannot be reached/);
      const refused = await launch("print during");
      expect(refused.status).toBe(503);
      // An MCP tool says the same, not the driver's message.
      const listedOverMcp = textOf(await mcp.callTool({ name: "corral_jobs", arguments: {} }));
      expect(listedOverMcp).toBe(`error: ${listed.body.error}`);
      expect((await api(server, "GET", "/api/health")).status).toBe(200);

      // Long enough for the worker to have ended (and its end to have been tried) meanwhile.
      await sleep(2000);
      relay.mend();
      // The pool opens new connections on its own: no restart.
      const second = await until(async () => {
        const res = await launch("print after");
        return res.status === 201 ? res.body : undefined;
      });
      const [ended, endedWhileAway] = await server.services.waits.waitFor([second.id, during.body.id], 10_000);
      expect(ended?.status).toBe("succeeded");
      expect(endedWhileAway?.status, endedWhileAway?.error ?? "").toBe("succeeded");
      expect(endedWhileAway?.exitCode).toBe(0);
      const jobs = (await api<{ jobs: Job[] }>(server, "GET", "/api/jobs")).body.jobs;
      // The launch refused while it was away stored nothing.
      expect(jobs.map((j) => j.prompt).sort()).toEqual(["print after", "print before", "sleep 1\nprint ended while away"]);
    } finally {
      await server?.close();
      server = undefined;
      await relay.close();
    }
  });
});
