import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job, JobFile, OutputPage, WsStats } from "@corral/shared";
import { PAGE_BYTES } from "../src/ws/job-stream.js";
import { SEND_BUFFER_CAP } from "../src/ws/connection.js";
import { api, signIn, startServer, type TestServer, until } from "./helpers.js";
import { WsClient } from "./ws-client.js";

let server: TestServer;
const clients: WsClient[] = [];
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

async function open(headers?: Record<string, string>): Promise<WsClient> {
  const client = await WsClient.open(server, headers);
  clients.push(client);
  return client;
}

let n = 0;
async function launch(prompt: string, workdir = path.join(server.root, `w${++n}`)): Promise<Job> {
  const res = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt, workdir });
  expect(res.status).toBe(201);
  return res.body;
}

/** The whole output log through REST, page by page. */
async function restText(id: string): Promise<{ text: string; cursor: number }> {
  let cursor = 0;
  let text = "";
  for (;;) {
    const { body } = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output?cursor=${cursor}&limit=4194304`);
    text += body.chunks.map((c) => c.text).join("");
    if (body.cursor === cursor) return { text, cursor };
    cursor = body.cursor;
  }
}

const expectedLines = (fast: number, ticks: number) => [
  ...Array.from({ length: fast }, (_, i) => `line ${i + 1}`),
  ...Array.from({ length: ticks }, (_, i) => `tick ${i + 1}`),
  "done kiro-cli-chat",
];

describe("job streams", () => {
  test("subscribing mid-run from cursor 0 gives every line once, in order, then live lines", async () => {
    const job = await launch("print 20000\nticks 1000 2000");
    // Wait until the job is well under way: part of the output is in the log, part is to come.
    await until(async () => {
      const { body } = await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output?cursor=0&limit=1024`);
      return body.cursor > 0 ? true : undefined;
    });
    const client = await open();
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    const caughtUp = await client.waitFor("caught_up", (m) => m.jobId === job.id);
    await client.waitForEnd(job.id);

    const lines = client
      .text(job.id)
      .trimEnd()
      .split("\n")
      .map((l) => l.replace(/^(tick \d+) .*$/, "$1"));
    expect(lines).toEqual(expectedLines(20000, 2000));
    // Live output followed the replay: the job was still running when the stream caught up.
    const output = client.of("output", job.id);
    expect(output.some((m) => m.cursor > caughtUp.cursor)).toBe(true);
    const cursors = output.map((m) => m.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(cursors.at(-1)).toBe((await restText(job.id)).cursor);
  });

  test("a client that reconnects with its last cursor loses nothing and repeats nothing", async () => {
    const job = await launch("ticks 500 1500");
    const first = await open();
    first.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await first.waitFor("output", (m) => m.jobId === job.id && m.text.includes("tick 200 "));
    await first.close();
    const received = first.text(job.id);
    const last = first.of("output", job.id).at(-1)?.cursor ?? 0;

    const second = await open();
    second.send({ type: "subscribe_job", jobId: job.id, cursor: last });
    await second.waitForEnd(job.id);
    expect(received + second.text(job.id)).toBe((await restText(job.id)).text);
    expect(second.of("output", job.id)[0]?.cursor).toBeGreaterThan(last);
  });

  test("megabytes of multi-byte text cut across writes arrive whole, in order, as REST reads them", async () => {
    const line = "a é € 𝄞 ünïcödé\n";
    const lines = Math.floor((6 * 1024 * 1024) / Buffer.byteLength(line));
    const client = await open();
    const job = await launch(`utf8 ${lines * Buffer.byteLength(line)}`);
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await client.waitForEnd(job.id, 60_000);
    const expected = `${line.repeat(lines)}done kiro-cli-chat\n`;
    const streamed = client.text(job.id);
    expect(streamed.length).toBe(expected.length);
    expect(streamed === expected).toBe(true);
    const cursors = client.of("output", job.id).map((m) => m.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(cursors.length);
    const rest = await restText(job.id);
    expect(rest.text === expected).toBe(true);
    expect(cursors.at(-1)).toBe(rest.cursor);
  }, 90_000);

  test("a finished job replays completely, then its final status", async () => {
    const job = await launch("print 3000");
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined));
    const client = await open();
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await client.waitFor("caught_up", (m) => m.jobId === job.id);
    expect(client.text(job.id)).toBe((await restText(job.id)).text);
    expect(client.of("status", job.id)[0]?.job.status).toBe("succeeded");
  });

  test("the job list gets created and changed jobs", async () => {
    const client = await open();
    client.send({ type: "subscribe_jobs" });
    await client.waitFor("subscribed");
    const job = await launch("print 1");
    await client.waitFor("job", (m) => m.job.id === job.id && m.job.status === "succeeded");
    const statuses = client
      .of("job")
      .filter((m) => m.job.id === job.id)
      .map((m) => m.job.status);
    expect(statuses[0]).toBe("queued");
    expect(statuses).toContain("running");
  });

  test("bad messages get an error naming the field; the connection stays usable", async () => {
    const client = await open();
    client.socket.send("not json");
    await client.waitFor("error", (m) => m.field === "(message)");
    client.send({ type: "subscribe_job", jobId: "NOT A JOB", cursor: 0 });
    await client.waitFor("error", (m) => m.field === "jobId");
    client.send({ type: "subscribe_job", jobId: "abcdef123456", cursor: -1 });
    await client.waitFor("error", (m) => m.field === "cursor");
    client.send({ type: "dance" });
    await client.waitFor("error", (m) => m.field === "type");
    client.send({ type: "subscribe_job", jobId: "abcdef123456", cursor: 0 });
    await client.waitFor("error", (m) => m.field === "jobId" && m.message.includes("not found"));

    const job = await launch("print 10");
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined));
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 5 });
    await client.waitFor("error", (m) => m.field === "cursor" && m.message.includes("record boundary"));
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 10_000_000 });
    await client.waitFor("error", (m) => m.field === "cursor" && m.message.includes("past the end"));
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await client.waitFor("caught_up", (m) => m.jobId === job.id);
    expect(client.text(job.id)).toContain("line 10\n");
  });

  test("a client that stops reading costs the server at most the cap, and later catches up completely", async () => {
    const total = 40 * 1024 * 1024;
    const client = await open();
    client.socket.pause();
    const job = await launch(`bytes ${total}`);
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined), 60_000);
    const { body: stats } = await api<WsStats>(server, "GET", "/api/ws/stats");
    const mine = stats.connections.find((c) => c.streams.includes(job.id));
    expect(stats.sendBufferCap).toBe(SEND_BUFFER_CAP);
    // One message may go out on top of the cap: a page (or a live chunk, no bigger) and its head line.
    expect(mine?.peakBufferedBytes).toBeLessThanOrEqual(SEND_BUFFER_CAP + PAGE_BYTES + 1024);
    expect(mine?.catchUps).toBeGreaterThanOrEqual(1);

    client.socket.resume();
    await client.waitForEnd(job.id, 60_000);
    const text = client.text(job.id);
    expect(text.length).toBe(total + "done kiro-cli-chat\n".length);
    expect(text.startsWith("x\nx\n")).toBe(true);
    expect(text.endsWith("x\ndone kiro-cli-chat\n")).toBe(true);
  }, 90_000);
});

describe("file events", () => {
  test("create, modify, delete and rename reach the stream and the job's file list", async () => {
    const workdir = path.join(server.root, "files-events");
    mkdirSync(path.join(workdir, "node_modules"), { recursive: true });
    writeFileSync(path.join(workdir, "keep.txt"), "old\n");
    writeFileSync(path.join(workdir, "old.txt"), "will move\n");
    writeFileSync(path.join(workdir, "gone.txt"), "will go\n");
    const job = await launch(
      [
        "sleep 0.4",
        "write a.txt hello",
        "sleep 0.4",
        "append keep.txt more",
        "rename old.txt moved.txt",
        "delete gone.txt",
        "mkdir sub",
        "write sub/deep.txt x",
        "write node_modules/ignored.js x",
        "sleep 0.4",
      ].join("\n"),
      workdir,
    );
    const client = await open();
    client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await client.waitForEnd(job.id);

    const expected: Record<string, [JobFile["change"], number | null]> = {
      "a.txt": ["created", 5],
      "keep.txt": ["modified", 9],
      "moved.txt": ["created", 10],
      "old.txt": ["deleted", null],
      "gone.txt": ["deleted", null],
      "sub/deep.txt": ["created", 1],
    };
    const { body } = await api<{ files: JobFile[] }>(server, "GET", `/api/jobs/${job.id}/files`);
    expect(Object.fromEntries(body.files.map((f) => [f.path, [f.change, f.size]]))).toEqual(expected);

    // The stream's latest event per path says the same, and it came before the final status.
    const latest = new Map<string, JobFile>();
    for (const m of client.messages) {
      if (m.type === "files" && m.jobId === job.id) for (const f of m.files) latest.set(f.path, f);
      if (m.type === "file" && m.jobId === job.id) latest.set(m.file.path, m.file);
      if (m.type === "status" && m.job.status === "succeeded") break;
    }
    expect(Object.fromEntries([...latest.values()].map((f) => [f.path, [f.change, f.size]]))).toEqual(expected);
    // The first file showed up while the job was still running.
    const firstFile = client.messages.findIndex((m) => m.type === "file" && m.jobId === job.id);
    const running = client.messages.findIndex((m) => m.type === "status" && m.job.status !== "queued" && m.job.status !== "running");
    expect(firstFile).toBeGreaterThanOrEqual(0);
    expect(firstFile).toBeLessThan(running);

    // A later subscriber gets the stored list at once.
    const late = await open();
    late.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
    await late.waitFor("caught_up", (m) => m.jobId === job.id);
    expect(
      late
        .of("files", job.id)
        .flatMap((m) => m.files.map((f) => f.path))
        .sort(),
    ).toEqual(Object.keys(expected).sort());
  });

  test("a file made and removed within the job is not a change of the workdir", async () => {
    const job = await launch("write tmp.txt x\ndelete tmp.txt\nwrite kept.txt y");
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined));
    const { body } = await api<{ files: JobFile[] }>(server, "GET", `/api/jobs/${job.id}/files`);
    expect(body.files.map((f) => [f.path, f.change])).toEqual([["kept.txt", "created"]]);
  });
});

describe("WebSocket security", () => {
  test("an upgrade without the token, or from a foreign origin, is refused", async () => {
    await expect(WsClient.open(server, {})).rejects.toThrow("HTTP 401");
    await expect(WsClient.open(server, { authorization: "Bearer wrong-token-0123456789" })).rejects.toThrow("HTTP 401");
    await expect(WsClient.open(server, { ...server.auth, origin: "http://evil.example" })).rejects.toThrow("HTTP 403");
    await expect(WsClient.open(server, { cookie: `corral_token=${server.token}` })).rejects.toThrow("HTTP 401");
    const viaCookie = await open({ cookie: await signIn(server) });
    viaCookie.send({ type: "subscribe_jobs" });
    await viaCookie.waitFor("subscribed");
  });
});
