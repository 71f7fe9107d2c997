import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { groupAlive } from "../src/jobs/process-group.js";
import { api, fakeBinDir, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { hasBwrap } from "./required-tool.js";

const bwrapWorks = hasBwrap();

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A `command` agent that runs its prompt as a shell script, in the bubblewrap sandbox. */
async function sandboxedAgent(name: string, workdir: string, on: TestServer = server) {
  mkdirSync(workdir, { recursive: true });
  const res = await api(on, "POST", "/api/agents", {
    name,
    kind: "command",
    command: "/bin/sh",
    args: ["-c", "{prompt}"],
    workdir,
    sandbox: "bwrap",
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ sandbox: "bwrap" });
}

async function run(agent: string, prompt: string, on: TestServer = server): Promise<{ job: Job; output: string }> {
  const launched = await api<Job>(on, "POST", "/api/jobs", { agent, prompt });
  expect(launched.status).toBe(201);
  const [job] = await on.services.waits.waitFor([launched.body.id], 30_000);
  const output = on.services.output.outputTail(job!, 100_000);
  return { job: job!, output };
}

describe.skipIf(!bwrapWorks)("bubblewrap sandbox (agent setting sandbox: bwrap)", () => {
  test("the worker writes inside its workdir and nowhere else; Corral's data and ~/.ssh are hidden", async () => {
    const workdir = path.join(server.root, "project");
    mkdirSync(path.join(server.root, ".ssh"));
    writeFileSync(path.join(server.root, ".ssh", "id_ed25519"), "PRIVATE KEY");
    writeFileSync(path.join(server.root, "notes.txt"), "readable");
    await sandboxedAgent("boxed", workdir);
    const outside = path.join(server.root, "escaped.txt");
    const script = [
      "echo inside > inside.txt && echo wrote-inside",
      `echo x > ${outside} 2>/dev/null && echo wrote-home || echo home-refused`,
      "echo x > /usr/corral-escape 2>/dev/null && echo wrote-usr || echo usr-refused",
      `cat ${path.join(server.root, "notes.txt")}`,
      `test -e ${path.join(server.root, ".ssh", "id_ed25519")} && echo ssh-visible || echo ssh-hidden`,
      `test -e ${path.join(server.dataDir, "corral.db")} && echo data-visible || echo data-hidden`,
      "echo scratch > /tmp/scratch && echo tmp-private",
      "echo pid1=$(cat /proc/1/comm)",
    ].join("\n");
    const { job, output } = await run("boxed", script);
    expect(job.status).toBe("succeeded");
    expect(readFileSync(path.join(workdir, "inside.txt"), "utf8")).toBe("inside\n");
    expect(existsSync(outside)).toBe(false);
    expect(existsSync("/usr/corral-escape")).toBe(false);
    expect(output).toContain("wrote-inside");
    expect(output).toContain("home-refused");
    expect(output).toContain("usr-refused");
    expect(output).toContain("readable");
    expect(output).toContain("ssh-hidden");
    expect(output).toContain("data-hidden");
    expect(output).toContain("tmp-private");
    // Its own PID namespace: the host's init is not visible.
    expect(output).not.toMatch(/pid1=(systemd|init)\n/);
    expect(job.invocation?.command).toMatch(/bwrap$/);
    expect(job.invocation?.args).toEqual(expect.arrayContaining(["--ro-bind", "/", "--bind", workdir, "--", "/bin/sh"]));
  });

  test("cancel stops a sandboxed worker that ignores SIGTERM, and all it started", async () => {
    const workdir = path.join(server.root, "stubborn");
    await sandboxedAgent("stubborn", workdir);
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "stubborn", prompt: "trap '' TERM; sleep 300 & sleep 300; wait" });
    const running = await until(async () => {
      const j = await server.services.jobs.get(launched.body.id);
      return j.status === "running" ? j : undefined;
    });
    const cancelled = await api<Job>(server, "POST", `/api/jobs/${launched.body.id}/cancel`);
    expect(cancelled.body.status).toBe("cancelled");
    // Nothing of the group is left running (zombies aside: this container's PID 1 does not reap orphans).
    expect(groupAlive(running.pid!)).toBe(false);
  });

  test("a workdir that is home itself does not uncover ~/.ssh", async () => {
    // Home is a workdir only while the data dir lies elsewhere (workdirs never hold it).
    const dataElsewhere = tempDir("corral-sandbox-data-");
    const homeServer = await startServer({}, { dataDir: path.join(dataElsewhere, "data") });
    try {
      mkdirSync(path.join(homeServer.root, ".ssh"));
      writeFileSync(path.join(homeServer.root, ".ssh", "id_ed25519"), "PRIVATE KEY");
      await sandboxedAgent("home_boxed", homeServer.root, homeServer);
      const script = [
        `test -e ${path.join(homeServer.root, ".ssh", "id_ed25519")} && echo ssh-visible || echo ssh-hidden`,
        "echo home > in-home.txt && echo wrote-home",
      ].join("\n");
      const { job, output } = await run("home_boxed", script, homeServer);
      expect(job.status).toBe("succeeded");
      expect(output).toContain("ssh-hidden");
      expect(output).toContain("wrote-home");
    } finally {
      await homeServer.close();
      rmSync(dataElsewhere, { recursive: true, force: true });
    }
  });
});

describe("sandbox settings (no bubblewrap needed)", () => {
  test("an agent with sandbox bwrap on a machine without bubblewrap fails its jobs with the reason, never running unconfined", async () => {
    // A server whose PATH has no bwrap, as on a machine without bubblewrap.
    const bare = await startServer({ PATH: fakeBinDir });
    try {
      const workdir = path.join(bare.root, "unboxed");
      const created = await api(bare, "POST", "/api/agents", {
        name: "boxed",
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        workdir,
        sandbox: "bwrap",
      });
      expect(created.status).toBe(201);
      const launched = await api<Job>(bare, "POST", "/api/jobs", { agent: "boxed", prompt: "echo ran > ran.txt" });
      const [job] = await bare.services.waits.waitFor([launched.body.id], 30_000);
      expect(job?.status).toBe("failed");
      expect(job?.error).toMatch(/sandbox "bwrap", but bubblewrap is not installed \(Debian\/Ubuntu: apt-get install bubblewrap\)/);
      expect(existsSync(path.join(workdir, "ran.txt"))).toBe(false);
    } finally {
      await bare.close();
    }
  });

  test("an unsandboxable agent fails loudly instead of running unconfined", async () => {
    const res = await api(server, "POST", "/api/agents", {
      name: "local_llm",
      kind: "ollama",
      baseUrl: "http://127.0.0.1:9",
      sandbox: "bwrap",
      workdir: path.join(server.root, "llm"),
    });
    expect(res.status).toBe(201);
    const { job } = await run("local_llm", "hello");
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/sandbox "bwrap".*run inside Corral.*set its sandbox to "none"/);
  });

  test("sandbox takes only known values", async () => {
    const res = await api<{ field: string }>(server, "PATCH", "/api/agents/gemini", { sandbox: "docker" });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("sandbox");
  });
});
