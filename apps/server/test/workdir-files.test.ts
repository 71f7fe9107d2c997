import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { DirListing, FileRead, Job, WorkdirList } from "@corral/shared";
import { isFinalStatus } from "@corral/shared";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

let server: TestServer;
let workdir: string;
let outside: string;
beforeAll(async () => {
  server = await startServer();
  outside = tempDir("corral-outside-");
  writeFileSync(path.join(outside, "secret.txt"), "secret");
  workdir = path.join(server.root, "browse");
  // A job makes this a known workdir.
  const job = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "write hello.txt hola", workdir });
  await until(async () => (isFinalStatus((await api<Job>(server, "GET", `/api/jobs/${job.body.id}`)).body.status) ? true : undefined));
  mkdirSync(path.join(workdir, "sub"));
  writeFileSync(path.join(workdir, "sub", "big.txt"), "0123456789".repeat(1000));
  writeFileSync(path.join(workdir, "utf8.txt"), "añb€c");
  writeFileSync(path.join(workdir, "euros.txt"), `${"a€😀".repeat(700)}end`);
  writeFileSync(path.join(workdir, "blob.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  symlinkSync(outside, path.join(workdir, "escape-dir"));
  symlinkSync(path.join(outside, "secret.txt"), path.join(workdir, "escape-file"));
  symlinkSync(path.join(workdir, "hello.txt"), path.join(workdir, "inner-link"));
  execFileSync("mkfifo", [path.join(workdir, "pipe")]);
  // A directory under the allowed root that no job or agent uses.
  mkdirSync(path.join(server.root, "stranger"));
  writeFileSync(path.join(server.root, "stranger", "x.txt"), "x");
});
afterAll(async () => {
  await server.close();
});

const q = (p: string) => encodeURIComponent(p);

async function raw(p: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/api/workdirs/raw?path=${q(p)}`, { headers: { ...server.auth, ...headers } });
}

describe("browsing workdirs", () => {
  test("lists known workdirs and a directory", async () => {
    const { body: list } = await api<WorkdirList>(server, "GET", "/api/workdirs");
    const listed = list.workdirs.find((w) => w.path === workdir);
    expect(listed?.jobs).toBe(1);
    // When its newest job was added: the panel opens on the workdir used last.
    const { body: job } = await api<{ jobs: Job[] }>(server, "GET", "/api/jobs?limit=1");
    expect(listed?.lastJobAt).toBe(job.jobs[0]?.createdAt);
    const { status, body } = await api<DirListing>(server, "GET", `/api/workdirs/list?path=${q(workdir)}`);
    expect(status).toBe(200);
    const byName = Object.fromEntries(body.entries.map((e) => [e.name, e]));
    expect(body.entries[0]?.name).toBe("sub");
    expect(byName["hello.txt"]).toMatchObject({ type: "file", size: 4 });
    expect(byName["escape-dir"]?.type).toBe("symlink");
    expect(byName.pipe?.type).toBe("other");
  });

  test("reads text, detects binary, and never splits a character", async () => {
    const text = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "hello.txt"))}`);
    expect(text.body).toMatchObject({ binary: false, text: "hola", size: 4 });
    const bin = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "blob.bin"))}`);
    expect(bin.body).toMatchObject({ binary: true, text: null, size: 8 });
    // "añb€c": ñ is 2 bytes at 1–2, € is 3 bytes at 4–6. A window cut inside € stops before it.
    const cut = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "utf8.txt"))}&offset=2&limit=1024`);
    expect(cut.body).toMatchObject({ offset: 3, text: "b€c" });
    const window = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(path.join(workdir, "sub/big.txt"))}&offset=5&limit=1024`);
    expect(window.body.text).toHaveLength(1024);
    expect(window.body.text?.startsWith("56789")).toBe(true);
  });

  test("reads on part by part from each part's end, never splitting a character, to the end", async () => {
    const file = path.join(workdir, "euros.txt");
    const whole = `${"a€😀".repeat(700)}end`;
    const size = Buffer.byteLength(whole);
    const parts: FileRead[] = [];
    // 1,000 bytes a part: most cuts fall inside a 3- or 4-byte character.
    for (let offset = 0; parts.length < 20; ) {
      const { status, body } = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(file)}&offset=${offset}&limit=1000`);
      expect(status).toBe(200);
      expect(body.offset).toBe(offset);
      expect(body.text).not.toContain("\uFFFD");
      parts.push(body);
      offset = body.offset + body.length;
      if (offset >= body.size) break;
    }
    // Each part but the last is as long as asked, less the cut-off character's first bytes.
    expect(parts.slice(0, -1).every((p) => p.length > 996 && p.length <= 1000)).toBe(true);
    expect(parts.length).toBeGreaterThanOrEqual(Math.ceil(size / 1000));
    expect(parts.map((p) => p.text).join("")).toBe(whole);
    // The end itself is a place to read from: an empty part.
    const atEnd = await api<FileRead>(server, "GET", `/api/workdirs/read?path=${q(file)}&offset=${size}`);
    expect(atEnd.body).toMatchObject({ offset: size, length: 0, text: "" });
  });

  test("an offset or limit that is not a plain count of bytes in the file is refused, naming the field", async () => {
    const file = path.join(workdir, "euros.txt");
    const size = Buffer.byteLength(`${"a€😀".repeat(700)}end`);
    const refused = async (query: string, field: string) => {
      const res = await api<{ error: string; field?: string }>(server, "GET", `/api/workdirs/read?path=${q(file)}&${query}`);
      expect(res.status, `${query}: ${res.body.error}`).toBe(400);
      expect(res.body.field, query).toBe(field);
      return res.body.error;
    };
    for (const offset of ["-1", "abc", "0x10", "1e3", "", " 5", "1.5", "Infinity", "５"]) {
      expect(await refused(`offset=${q(offset)}`, "offset")).toBe(
        "invalid input: offset: the offset must be a whole number of bytes, written in digits",
      );
    }
    expect(await refused("offset=99999999999999999999", "offset")).toBe("invalid input: offset: the offset must be at most 9,007,199,254,740,991");
    expect(await refused(`offset=${size + 1}`, "offset")).toBe(
      `the offset ${size + 1} is past the end of ${file} (${size} bytes); give an offset from 0 to ${size}`,
    );
    expect(await refused("limit=3", "limit")).toBe("invalid input: limit: the limit must be at least 4");
    expect(await refused("limit=4194305", "limit")).toBe("invalid input: limit: the limit must be at most 4,194,304");
    expect(await refused("limit=-5", "limit")).toContain("written in digits");
    expect(await refused("offset=1&offset=2", "offset")).toBe(
      "invalid input: offset: give the offset once, a whole number of bytes written in digits",
    );
    // A refused offset reads nothing and tells nothing of a file outside the workdirs.
    expect((await api(server, "GET", `/api/workdirs/read?path=${q(path.join(outside, "secret.txt"))}&offset=999`)).status).toBe(404);
  });

  test("downloads with byte ranges", async () => {
    const big = path.join(workdir, "sub", "big.txt");
    const whole = await raw(big);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("content-type")).toContain("text/plain");
    expect((await whole.text()).length).toBe(10_000);
    const part = await raw(big, { range: "bytes=10-19" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/10000");
    expect(await part.text()).toBe("0123456789");
    const suffix = await raw(big, { range: "bytes=-3" });
    expect(await suffix.text()).toBe("789");
    const beyond = await raw(big, { range: "bytes=20000-" });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe("bytes */10000");
    expect((await raw(big, { range: "bytes=-0" })).status).toBe(416);
    expect((await raw(big, { range: "bytes=19-10" })).status).toBe(416);
    // Several ranges or a malformed header: the whole file, as RFC 9110 allows.
    for (const range of ["bytes=0-1,5-6", "bytes=abc", "pages=1-2"]) expect((await raw(big, { range })).status, range).toBe(200);
    const bin = await raw(path.join(workdir, "blob.bin"));
    expect(bin.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await bin.arrayBuffer())).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const link = await raw(path.join(workdir, "inner-link"));
    expect(await link.text()).toBe("hola");
  });

  test("path escapes, special files and unknown directories are refused", async () => {
    const refused = async (url: string, status: number, field = "path") => {
      const res = await api<{ error: string; field?: string }>(server, "GET", url);
      expect(res.status, `${url}: ${res.body.error}`).toBe(status);
      expect(res.body.field).toBe(field);
      return res.body.error;
    };
    expect(await refused(`/api/workdirs/read?path=${q(`${workdir}/../stranger/x.txt`)}`, 400)).toContain("..");
    expect(await refused(`/api/workdirs/list?path=${q(`${workdir}/sub/..`)}`, 400)).toContain("..");
    expect(await refused(`/api/workdirs/read?path=${q(path.join(workdir, "escape-file"))}`, 404)).not.toContain(outside);
    await refused(`/api/workdirs/list?path=${q(path.join(workdir, "escape-dir"))}`, 404);
    await refused(`/api/workdirs/raw?path=${q(path.join(workdir, "escape-dir", "secret.txt"))}`, 404);
    await refused(`/api/workdirs/read?path=${q(path.join(outside, "secret.txt"))}`, 404);
    await refused(`/api/workdirs/read?path=${q(path.join(server.root, "stranger", "x.txt"))}`, 404);
    await refused(`/api/workdirs/list?path=${q("/etc")}`, 404);
    await refused(`/api/workdirs/read?path=${q(path.join(server.dataDir, "corral.db"))}`, 404);
    await refused(`/api/workdirs/read?path=relative.txt`, 400);
    expect(await refused(`/api/workdirs/read?path=${q(path.join(workdir, "pipe"))}`, 400)).toContain("not a regular file");
    await refused(`/api/workdirs/read?path=${q(path.join(workdir, "nope.txt"))}`, 404);
    await refused(`/api/workdirs/list?path=${q(path.join(workdir, "hello.txt"))}`, 400);
    const noToken = await fetch(`${server.url}/api/workdirs/list?path=${q(workdir)}`);
    expect(noToken.status).toBe(401);
  });
});

describe("the file API is no oracle for paths outside the workdirs", () => {
  const endpoints = ["list", "read", "raw"] as const;
  async function answer(endpoint: string, query: string) {
    const res = await fetch(`${server.url}/api/workdirs/${endpoint}?path=${query}`, { headers: server.auth });
    return { status: res.status, body: (await res.json()) as { error: string; field?: string } };
  }

  test("missing, outside, in an unknown directory, or reached through a link out: one status and one message", async () => {
    const hidden = [
      path.join(workdir, "nope.txt"),
      path.join(workdir, "no-dir", "nope.txt"),
      path.join(outside, "secret.txt"),
      path.join(outside, "missing.txt"),
      path.join(server.root, "stranger", "x.txt"),
      path.join(server.root, "stranger", "missing.txt"),
      "/etc/passwd",
      "/etc/no-such-file",
      "/no-such-dir/at/all",
      path.join(server.dataDir, "corral.db"),
      path.join(server.dataDir, "token"),
      path.join(workdir, "escape-file"),
      path.join(workdir, "escape-dir"),
      path.join(workdir, "escape-dir", "secret.txt"),
      path.join(workdir, "escape-dir", "missing.txt"),
      path.join(workdir, "hello.txt", "under-a-file"),
    ];
    const answers = new Set<string>();
    for (const endpoint of endpoints) {
      for (const requested of hidden) {
        const { status, body } = await answer(endpoint, encodeURIComponent(requested));
        // Never where a link leads.
        expect(body.error.replace(requested, "<path>"), `${endpoint} ${requested}`).not.toContain(outside);
        answers.add(JSON.stringify({ status, field: body.field, error: body.error.replace(requested, "<path>") }));
      }
    }
    expect([...answers].map((a) => JSON.parse(a) as unknown)).toEqual([
      { status: 404, field: "path", error: "<path> was not found in the workdirs of known jobs and agents (only those can be browsed)" },
    ]);
  });

  test("traversal spellings, a NUL byte and over-long names are bad input naming the field; a FIFO is refused without hanging", async () => {
    const base = encodeURIComponent(workdir);
    const bad = [
      `${base}/../stranger/x.txt`,
      `${base}/%2e%2e/stranger/x.txt`,
      `${base}/%2E%2E/stranger/x.txt`,
      `${base}/.%2e/stranger/x.txt`,
      `${base}%2F..%2Fstranger%2Fx.txt`,
      `${base}%2F%2E%2E%2Fstranger%2Fx.txt`,
      `${base}/sub/..`,
      `${base}%5C..%5Cstranger%5Cx.txt`,
      `${base}/hello.txt%00.png`,
      `${base}/${"n".repeat(300)}`,
      "relative.txt",
    ];
    for (const endpoint of endpoints) {
      for (const query of bad) {
        const { status, body } = await answer(endpoint, query);
        expect({ status, field: body.field }, `${endpoint} ${query}: ${body.error}`).toEqual({ status: 400, field: "path" });
      }
      const fifo = await answer(endpoint === "list" ? "read" : endpoint, encodeURIComponent(path.join(workdir, "pipe")));
      expect(fifo.status).toBe(400);
      expect(fifo.body.error).toContain("not a regular file");
    }
    const socketPath = path.join(workdir, "socket");
    const listener = net.createServer().listen(socketPath);
    await once(listener, "listening");
    try {
      for (const endpoint of ["read", "raw"]) {
        const socket = await answer(endpoint, encodeURIComponent(socketPath));
        expect({ status: socket.status, field: socket.body.field }, socket.body.error).toEqual({ status: 400, field: "path" });
      }
    } finally {
      listener.close();
    }
    // Spellings that stay inside are read as what they are.
    for (const inside of [`${base}/./hello.txt`, `${base}//hello.txt`, `${base}%2Fhello.txt`, encodeURIComponent(path.join(workdir, "inner-link"))]) {
      const { status } = await answer("read", inside);
      expect(status, inside).toBe(200);
    }
  });
});

describe("what a job changed", () => {
  test("a job that writes three files and deletes one reports exactly that in _done", async () => {
    const dir = path.join(server.root, "three");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "old.txt"), "old");
    const mcp = await connectMcp(server);
    try {
      const id = textOf(
        await mcp.callTool({
          name: "gemini_run_async",
          arguments: { prompt: "write a.txt 1\nwrite b.txt 22\nwrite c.txt 333\ndelete old.txt", workdir: dir },
        }),
      );
      const waited = textOf(await mcp.callTool({ name: "corral_wait", arguments: { job_ids: [id], timeout_s: 30 } }));
      expect(waited).toContain(`${id} · gemini · listo`);
      expect(waited).toContain("files: 3 created, 1 deleted");
      const done = textOf(await mcp.callTool({ name: "gemini_done", arguments: { job_id: id } }));
      const lines = done.split("\n");
      expect(lines.slice(0, 3)).toEqual(["listo", "created: a.txt (1 B), b.txt (2 B), c.txt (3 B)", "deleted: old.txt"]);
      expect(done).not.toContain("modified:");
      const jobs = textOf(await mcp.callTool({ name: "corral_jobs", arguments: { limit: 5 } }));
      expect(jobs).toContain(`${id} · gemini · listo`);
      expect(jobs.split("\n").find((l) => l.startsWith(id))).toContain("files: 3 created, 1 deleted");

      const run = textOf(await mcp.callTool({ name: "gemini_run", arguments: { prompt: "append a.txt more\ndelete b.txt", workdir: dir } }));
      expect(run.split("\n").slice(0, 3)).toEqual(["ok", "modified: a.txt (6 B)", "deleted: b.txt"]);
    } finally {
      await mcp.close();
    }
  });
});

describe("the workdir snapshot at a job's start", () => {
  /** 20 000 files in 40 folders: a walk that takes many slices. */
  function bigWorkdir(name: string): string {
    const dir = path.join(server.root, name);
    for (let d = 0; d < 40; d++) {
      mkdirSync(path.join(dir, `d${d}`), { recursive: true });
      for (let f = 0; f < 500; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), "");
    }
    return dir;
  }

  test("a big workdir's snapshot holds up no other request: /api/health answers while it is taken, and the job reports only its own file", async () => {
    const dir = bigWorkdir("big");
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "write new.txt 1", workdir: dir });
    expect(launched.status).toBe(201);
    // The snapshot is on disk once the walk is done: count the health answers that came before.
    const snapshot = path.join(jobDataPaths(server.dataDir, launched.body.id).dir, "workdir-before.json");
    let answeredDuring = 0;
    while (!existsSync(snapshot)) {
      const health = await fetch(`${server.url}/api/health`);
      expect(health.status).toBe(200);
      if (!existsSync(snapshot)) answeredDuring++;
    }
    expect(answeredDuring).toBeGreaterThan(0);
    const [job] = await server.services.waits.waitFor([launched.body.id], 90_000);
    expect(job?.status).toBe("succeeded");
    expect((await server.services.files.list(launched.body.id)).map((f) => [f.path, f.change])).toEqual([["new.txt", "created"]]);
    // 20 000 files written and walked twice: minutes on a machine busy with other suites.
  }, 180_000);

  test("a job cancelled while its snapshot is taken never starts its worker, and frees its slot", async () => {
    const dir = bigWorkdir("big-cancelled");
    await server.services.agents.update("kiro", { maxConcurrent: 1 });
    try {
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "write never.txt 1", workdir: dir });
      const cancelled = await api<Job>(server, "POST", `/api/jobs/${launched.body.id}/cancel`);
      expect(cancelled.body.status).toBe("cancelled");
      expect(cancelled.body.error).toBe("cancelled before it started");
      // With one slot, the next kiro job runs only once the cancelled one gave its slot back.
      const next = await api<Job>(server, "POST", "/api/jobs", {
        agent: "kiro",
        prompt: "write after.txt 1",
        workdir: path.join(server.root, "after-cancel"),
      });
      const [after] = await server.services.waits.waitFor([next.body.id], 90_000);
      expect(after?.status).toBe("succeeded");
      expect(existsSync(path.join(dir, "never.txt"))).toBe(false);
      expect((await server.services.jobs.get(launched.body.id)).pid).toBeNull();
    } finally {
      await server.services.agents.update("kiro", { maxConcurrent: 4 });
    }
  }, 180_000);
});
