import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { loadConfig } from "../config.js";
import { sqliteRepos, type TestRegistry } from "../db/registry-contract/dialects.js";
import { addJobs, jobRow } from "../db/registry-contract/rows.js";
import { WorkdirService } from "../workdirs/service.js";
import { BrowsingRequests } from "./browsing-requests.js";
import { WorktreeAnswers } from "./worktree-answers.js";

const T = Date.now();

// The runner's side alone: requests found at a heartbeat (their NOTIFY missed) are answered from
// this machine's disk by the server's own WorkdirService; others' and answered ones are left alone.
describe("a runner's browsing requests", () => {
  let registry: TestRegistry;
  let root: string;
  let browsing: BrowsingRequests;
  const errors: unknown[] = [];
  beforeEach(async () => {
    registry = await sqliteRepos();
    root = tempDir();
    const workdir = path.join(root, "w");
    mkdirSync(workdir);
    writeFileSync(path.join(workdir, "a.txt"), "hello");
    for (const id of ["me", "other"]) {
      await registry.runners.register({ id, name: id, labels: ["gpu"], hostname: "h", version: "0", startedAt: T, heartbeatAt: T, stoppedAt: null });
    }
    await addJobs(registry, [jobRow("j1", { workdir, runner: "me" })]);
    const config = loadConfig({ HOME: root, CORRAL_DATA_DIR: path.join(root, "data"), CORRAL_WORKDIR_ROOTS: root });
    const workdirs = new WorkdirService({ config, agents: { list: async () => [] }, files: registry.jobFiles });
    browsing = new BrowsingRequests("me", registry, workdirs, new WorktreeAnswers(registry, "me"), (_what, err) => errors.push(err));
  });
  afterEach(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  const ask = (id: string, runner: string, kind: "list" | "read" | "raw", p: string) =>
    registry.runnerRequests.ask({ id, runner, kind, path: p, readOffset: 0, readLimit: 100, range: null, args: null, askedAt: T });

  it("answers the requests addressed to it that it has not heard of, as the server's WorkdirService would", async () => {
    await ask("r1", "me", "read", path.join(root, "w", "a.txt"));
    await ask("r2", "me", "list", path.join(root, "elsewhere"));
    await ask("r3", "other", "read", path.join(root, "w", "a.txt"));
    await ask("r4", "me", "raw", path.join(root, "w", "a.txt"));
    await browsing.catchUp();
    await browsing.settled();
    expect(errors).toEqual([]);
    expect(JSON.parse((await registry.runnerRequests.get("r1"))?.answer ?? "")).toMatchObject({ text: "hello", size: 5, binary: false });
    expect(JSON.parse((await registry.runnerRequests.get("r2"))?.error ?? "")).toEqual({
      status: 404,
      code: "not_found",
      field: "path",
      error: `${path.join(root, "elsewhere")} was not found in the workdirs of known jobs and agents (only those can be browsed)`,
    });
    const raw = JSON.parse((await registry.runnerRequests.get("r4"))?.answer ?? "");
    expect(raw).toMatchObject({ size: 5, range: null, binary: false });
    expect(Buffer.from(raw.data, "base64").toString()).toBe("hello");
    // Another runner's request is not this one's to answer.
    expect(await registry.runnerRequests.get("r3")).toMatchObject({ answeredAt: null, answer: null, error: null });
    expect((await registry.runnerRequests.pending("me")).map((r) => r.id)).toEqual([]);
  });
});
