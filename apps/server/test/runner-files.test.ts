// Browsing a workdir that is on a runner's machine: the server asks the runner through the
// registry (runner_requests, NOTIFY) and gives its answers as its own. The runner's workdir lies
// outside the server's CORRAL_WORKDIR_ROOTS, so nothing in these answers can come from the
// server's own reading of its disk.
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ApiError, DirListing, FileRead, Job, WorkdirList } from "@corral/shared";
import { api, startServer, tempDir, type TestServer, until } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";

const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TIMEOUT_MS = 1500;
const q = (p: string) => encodeURIComponent(p);

/**
 * A runner "gpu-box" whose kiro job wrote made.txt in <root>/gpu-box/w, and a server that may
 * only read <root>/server. The job is launched by a first server whose roots allow the workdir
 * (a launch checks it on the server too), then that server is replaced by one that cannot read it.
 */
async function remoteWorkdir(env: Record<string, string> = {}): Promise<{ corral: TestServer; box: RunnerProcess; workdir: string; root: string }> {
  const root = tempDir();
  const remoteRoot = path.join(root, "gpu-box");
  const serverRoot = path.join(root, "server");
  mkdirSync(remoteRoot);
  mkdirSync(serverRoot);
  const url = await postgres.database();
  const workdir = path.join(remoteRoot, "w");
  const launcher = await startServer({ CORRAL_DATABASE_URL: url, CORRAL_WORKDIR_ROOTS: remoteRoot }, { root });
  let box: RunnerProcess;
  try {
    expect((await api(launcher, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" })).status).toBe(200);
    box = await startRunnerProcess(root, {
      CORRAL_DATABASE_URL: url,
      CORRAL_RUNNER_LABELS: "gpu",
      CORRAL_RUNNER_NAME: "gpu-box",
      CORRAL_WORKDIR_ROOTS: remoteRoot,
    });
    const started = box;
    cleanups.push(async () => {
      started.child.kill("SIGCONT");
      await started.stop("SIGKILL");
    });
    const launched = await api<Job>(launcher, "POST", "/api/jobs", { agent: "kiro", prompt: "write made.txt hello from gpu-box", workdir });
    expect(launched.status).toBe(201);
    const [ended] = await launcher.services.waits.waitFor([launched.body.id], 15_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: box.id });
  } finally {
    await launcher.close();
  }
  const corral = await startServer(
    { CORRAL_DATABASE_URL: url, CORRAL_WORKDIR_ROOTS: serverRoot, CORRAL_RUNNER_ANSWER_TIMEOUT_MS: String(TIMEOUT_MS), ...env },
    { root },
  );
  cleanups.push(() => corral.close());
  return { corral, box, workdir, root };
}

describe.skipIf(!postgres.available)("browsing a workdir on a runner's machine", () => {
  test("lists, reads and serves the runner's files (with a Range), and names the runner", async () => {
    const { corral, workdir } = await remoteWorkdir();
    const workdirs = await api<WorkdirList>(corral, "GET", "/api/workdirs");
    expect(workdirs.status).toBe(200);
    expect(workdirs.body.workdirs).toContainEqual({ path: workdir, agents: [], jobs: 1, lastJobAt: expect.any(Number), runner: "gpu-box" });

    const listing = await api<DirListing>(corral, "GET", `/api/workdirs/list?path=${q(workdir)}`);
    expect(listing.status).toBe(200);
    expect(listing.body).toMatchObject({ path: workdir, truncated: false, entries: [{ name: "made.txt", type: "file", size: 18 }] });

    const read = await api<FileRead>(corral, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "made.txt"))}&offset=6&limit=4`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ path: path.join(workdir, "made.txt"), size: 18, binary: false, offset: 6, length: 4, text: "from" });
    // The runner refuses an offset past the end as the server does, naming the field.
    const past = await api<ApiError>(corral, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "made.txt"))}&offset=19`);
    expect(past).toMatchObject({ status: 400, body: { field: "offset", error: expect.stringContaining("the offset 19 is past the end") } });

    const raw = await fetch(`${corral.url}/api/workdirs/raw?path=${q(path.join(workdir, "made.txt"))}&download=1`, {
      headers: { ...corral.auth, range: "bytes=11-" },
    });
    expect(raw.status).toBe(206);
    expect(raw.headers.get("content-range")).toBe("bytes 11-17/18");
    expect(raw.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(raw.headers.get("content-security-policy")).toMatch(/sandbox/);
    expect(raw.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''made.txt");
    expect(await raw.text()).toBe("gpu-box");
    const whole = await fetch(`${corral.url}/api/workdirs/raw?path=${q(path.join(workdir, "made.txt"))}`, { headers: corral.auth });
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe("hello from gpu-box");
    const outside = await fetch(`${corral.url}/api/workdirs/raw?path=${q(path.join(workdir, "made.txt"))}`, {
      headers: { ...corral.auth, range: "bytes=99-" },
    });
    expect(outside.status).toBe(416);
    expect(outside.headers.get("content-range")).toBe("bytes */18");

    // A file bigger than one answer (8 MiB): asked for whole, a 413 saying to ask for a range;
    // a range past the cap is read where it lies; an open range gets its first 8 MiB.
    const big = path.join(workdir, "big.bin");
    const cap = 8 * 1024 * 1024;
    const bytes = Buffer.alloc(cap + 1000, 7);
    bytes.write("tail", cap + 500);
    writeFileSync(big, bytes);
    const tooBig = await fetch(`${corral.url}/api/workdirs/raw?path=${q(big)}`, { headers: corral.auth });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as ApiError).error).toBe(
      `${big} is 8.0 MiB; a file on a runner comes at most 8 MiB per request: ask for a part with a Range header (bytes=0-${cap - 1}, then on), or view it a window at a time`,
    );
    const far = await fetch(`${corral.url}/api/workdirs/raw?path=${q(big)}`, {
      headers: { ...corral.auth, range: `bytes=${cap + 500}-${cap + 503}` },
    });
    expect(far.status).toBe(206);
    expect(far.headers.get("content-range")).toBe(`bytes ${cap + 500}-${cap + 503}/${cap + 1000}`);
    expect(await far.text()).toBe("tail");
    const open = await fetch(`${corral.url}/api/workdirs/raw?path=${q(big)}`, { headers: { ...corral.auth, range: "bytes=0-" } });
    expect(open.status).toBe(206);
    expect(open.headers.get("content-range")).toBe(`bytes 0-${cap - 1}/${cap + 1000}`);
    expect((await open.arrayBuffer()).byteLength).toBe(cap);

    // Without credentials, as every /api route.
    expect((await fetch(`${corral.url}/api/workdirs/list?path=${q(workdir)}`)).status).toBe(401);
  });

  test("the runner refuses what the server would, with the server's answers", async () => {
    const { corral, workdir, root } = await remoteWorkdir();
    // On the runner's machine: a link out of the workdir, a FIFO, a file outside any workdir.
    writeFileSync(path.join(root, "secret.txt"), "not yours");
    symlinkSync(path.join(root, "secret.txt"), path.join(workdir, "escape"));
    symlinkSync(root, path.join(workdir, "escape-dir"));
    execFileSync("mkfifo", [path.join(workdir, "pipe")]);
    const get = (route: string, p: string) => api<ApiError>(corral, "GET", `/api/workdirs/${route}?path=${q(p)}`);
    const notFound = (p: string) => ({
      status: 404,
      body: { error: `${p} was not found in the workdirs of known jobs and agents (only those can be browsed)`, code: "not_found", field: "path" },
    });

    for (const p of [path.join(workdir, "escape"), path.join(workdir, "escape-dir", "secret.txt"), path.join(workdir, "missing\u0001name")]) {
      expect(await get("read", p)).toEqual(notFound(p));
    }
    expect(await get("list", path.join(workdir, "escape-dir"))).toEqual(notFound(path.join(workdir, "escape-dir")));
    const fifo = await get("read", path.join(workdir, "pipe"));
    expect(fifo).toMatchObject({ status: 400, body: { code: "invalid_input", field: "path" } });
    expect(fifo.body.error).toMatch(/is not a regular file \(device, FIFO or socket\)/);
    const raw = await fetch(`${corral.url}/api/workdirs/raw?path=${q(path.join(workdir, "pipe"))}`, { headers: corral.auth });
    expect(raw.status).toBe(400);
    expect(await get("read", workdir)).toMatchObject({ status: 400, body: { error: `${workdir} is a directory; list it instead`, field: "path" } });
    // Refused before any runner is asked, as for the server's own workdirs.
    expect(await get("list", `${workdir}/../secret.txt`)).toMatchObject({ status: 400, body: { code: "invalid_input", field: "path" } });
    expect(await get("list", "-w")).toMatchObject({ status: 400, body: { error: "-w is not an absolute path; give the full path (~ allowed)" } });
  });

  test("a runner that does not answer is a 504 naming it; a silent or stopped one a 503 at once", async () => {
    const { corral, box, workdir } = await remoteWorkdir({ CORRAL_RUNNER_LEASE_S: "5" });
    box.child.kill("SIGSTOP");
    const frozenAt = Date.now();
    let since = Date.now();
    const silent = await api<ApiError>(corral, "GET", `/api/workdirs/list?path=${q(workdir)}`);
    expect(Date.now() - since).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(silent).toMatchObject({ status: 504, body: { code: "unavailable", field: "path" } });
    expect(silent.body.error).toBe("runner gpu-box did not answer in 1.5 s; is it running? see the Runners page");
    // Past its lease without a heartbeat: not asked at all.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + 5500 - Date.now())));
    since = Date.now();
    const lapsed = await api<ApiError>(corral, "GET", `/api/workdirs/list?path=${q(workdir)}`);
    expect(Date.now() - since).toBeLessThan(1000);
    expect(lapsed).toMatchObject({ status: 503, body: { code: "unavailable", field: "path" } });
    expect(lapsed.body.error).toMatch(/is on runner gpu-box, which has been silent for \d+ s \(no heartbeat\); is it running\? see the Runners page/);
    box.child.kill("SIGCONT");
    // Awake again: answered once its heartbeat is back.
    await until(
      async () => ((await api(corral, "GET", `/api/workdirs/list?path=${q(workdir)}`)).status === 200 ? true : undefined),
      8000,
      "an answer",
    );

    await box.stop("SIGTERM");
    since = Date.now();
    const stopped = await api<ApiError>(corral, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "made.txt"))}`);
    expect(Date.now() - since).toBeLessThan(1000);
    expect(stopped).toMatchObject({ status: 503, body: { code: "unavailable", field: "path" } });
    expect(stopped.body.error).toMatch(/is on runner gpu-box, which is stopped; start it again/);
    // Never read from the server's disk instead, though the directory is there too.
    expect((await api<WorkdirList>(corral, "GET", "/api/workdirs")).body.workdirs).toContainEqual(
      expect.objectContaining({ path: workdir, runner: "gpu-box" }),
    );
  });
});
