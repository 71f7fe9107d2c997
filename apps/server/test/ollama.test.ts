import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, test } from "vitest";
import type { AgentWithAvailability, Job, OllamaModelList, OllamaProbe } from "@corral/shared";
import { startFakeOllama, writesFile, type FakeOllama, type FakeModel } from "./fixtures/fake-ollama.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(models?: FakeModel[], env: Record<string, string> = {}): Promise<{ fake: FakeOllama; server: TestServer; mcp: Client }> {
  const fake = await startFakeOllama(models);
  cleanups.push(() => fake.close());
  const server = await startServer({ CORRAL_OLLAMA_URL: fake.url, ...env });
  cleanups.push(() => server.close());
  const mcp = await connectMcp(server, "/mcp?toolsets=ollama");
  cleanups.push(() => mcp.close());
  return { fake, server, mcp };
}

async function call(mcp: Client, name: string, args: Record<string, unknown>): Promise<string> {
  return textOf(await mcp.callTool({ name, arguments: args }));
}

/** Polls `<agent>_done` as an orchestrator would, until it stops saying pendiente. */
async function waitDone(mcp: Client, agent: string, jobId: string): Promise<string> {
  return until(async () => {
    const text = await call(mcp, `${agent}_done`, { job_id: jobId });
    return text.startsWith("pendiente") ? undefined : text;
  });
}

const outputText = async (server: TestServer, id: string) =>
  (await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${id}/output`)).body.chunks.map((c) => c.text).join("");

const job = async (server: TestServer, id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe("the Ollama worker loop", () => {
  test("ollama_run_async + ollama_done: the file is written, output.md holds the answer, usage is recorded", async () => {
    const { fake, server, mcp } = await setup();
    fake.script("qwen2.5:7b", writesFile("notes/hello.txt", "hola mundo\n", "Wrote notes/hello.txt with a greeting."));

    const id = await call(mcp, "ollama_run_async", { prompt: "Write a greeting to notes/hello.txt" });
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    const done = await waitDone(mcp, "ollama", id);
    expect(done.startsWith("listo")).toBe(true);

    const workdir = path.join(server.root, "corral-work", "ollama");
    expect(readFileSync(path.join(workdir, "notes/hello.txt"), "utf8")).toBe("hola mundo\n");
    expect(readFileSync(path.join(workdir, "output.md"), "utf8")).toBe("Wrote notes/hello.txt with a greeting.\n");
    expect(readFileSync(path.join(workdir, `output-${id}.md`), "utf8")).toBe("Wrote notes/hello.txt with a greeting.\n");

    const row = await job(server, id);
    expect(row.status).toBe("succeeded");
    expect(row.finalText).toBe("Wrote notes/hello.txt with a greeting.");
    expect(row.usage).toMatchObject({ model: "qwen2.5:7b", inputTokens: 240, outputTokens: 60, costUsd: 0 });

    // The real wire: num_ctx from the model's context length, the three tools, and the tool result sent back.
    expect(fake.chats[0]?.options?.num_ctx).toBe(32_768);
    expect(fake.chats[0]?.tools?.map((t) => t.function.name)).toEqual(["write_file", "read_file", "list_files"]);
    const toolMessage = fake.chats[1]?.messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({ tool_name: "write_file", content: "wrote 11 bytes to notes/hello.txt" });

    const tail = await outputText(server, id);
    expect(tail).toContain('→ write_file(path="notes/hello.txt"');
    expect(tail).toContain("← wrote 11 bytes to notes/hello.txt");
    expect(tail).toMatch(/turn 1: prompt 120 tok, output 30 tok, 1\.25 s/);
  });

  test("an agent's role is the system prompt its model gets", async () => {
    const { fake, server, mcp } = await setup();
    fake.script("qwen2.5:7b", () => ({ content: "Arr." }));
    expect((await api(server, "PATCH", "/api/agents/ollama", { role: "You are a pirate." })).status).toBe(200);
    const id = await call(mcp, "ollama_run_async", { prompt: "greet" });
    expect((await waitDone(mcp, "ollama", id)).startsWith("listo")).toBe(true);
    expect(fake.chats[0]?.messages[0]).toMatchObject({ role: "system", content: "You are a pirate." });
  });

  test("num_ctx is capped by CORRAL_OLLAMA_MAX_CTX and probable truncation is flagged", async () => {
    const { fake, server, mcp } = await setup([{ name: "qwen2.5:7b", contextLength: 131_072 }], { CORRAL_OLLAMA_MAX_CTX: "4096" });
    fake.script("qwen2.5:7b", () => ({ content: "done", promptEvalCount: 4000 }));
    const id = await call(mcp, "qwen_run_async", { prompt: "long task" });
    expect((await waitDone(mcp, "qwen", id)).startsWith("listo")).toBe(true);
    expect(fake.chats[0]?.options?.num_ctx).toBe(4096);
    expect(await outputText(server, id)).toContain("the prompt used 4000 of 4096 context tokens");
  });

  test("a model without tools gets a helpful error naming the tool-capable ones", async () => {
    const { mcp } = await setup([{ name: "gemma:2b", capabilities: ["completion"] }, { name: "qwen2.5:7b" }, { name: "llama3.1:8b" }]);
    const id = await call(mcp, "gemma_run_async", { prompt: "hi", model: "gemma:2b" });
    const done = await waitDone(mcp, "gemma", id);
    expect(done).toContain("error: ");
    expect(done).toContain("gemma:2b does not support tools; tool-capable models here: qwen2.5:7b, llama3.1:8b");
  });

  test("writes to ../x or through a symlink pointing out are refused, go back to the model, and nothing lands outside", async () => {
    const { fake, server, mcp } = await setup();
    const workdir = path.join(server.root, "w");
    const outside = tempDir("corral-outside-");
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    mkdirSync(workdir, { recursive: true });
    symlinkSync(outside, path.join(workdir, "link"));
    symlinkSync(path.join(outside, "dangling.txt"), path.join(workdir, "dangling.txt"));
    const attempts = ["../x", "link/y.txt", "dangling.txt", path.join(outside, "abs.txt")];
    fake.script("qwen2.5:7b", (_body, turn) =>
      turn < attempts.length
        ? { toolCalls: [{ name: "write_file", arguments: { path: attempts[turn], content: "escape" } }] }
        : { content: "could not" },
    );

    const id = await call(mcp, "ollama_run_async", { prompt: "try to escape", workdir });
    expect((await waitDone(mcp, "ollama", id)).startsWith("listo")).toBe(true);

    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(path.join(server.root, "x"))).toBe(false);
    const refusals =
      fake.chats
        .at(-1)
        ?.messages.filter((m) => m.role === "tool")
        .map((m) => m.content) ?? [];
    expect(refusals).toHaveLength(4);
    for (const r of refusals) expect(r).toMatch(/^error: refused: /);
  });

  test("cancel mid-loop aborts the request to Ollama and ends the job", async () => {
    const { fake, server, mcp } = await setup();
    fake.script("qwen2.5:7b", () => ({ content: "thinking about it...", hang: true }));
    const id = await call(mcp, "ollama_run_async", { prompt: "a long one" });
    await until(async () => ((await outputText(server, id)).includes("thinking") ? true : undefined));
    const aborted = fake.nextAbort();
    const started = Date.now();
    expect(await call(mcp, "corral_cancel", { job_id: id })).toContain("cancelled");
    const cancelMs = Date.now() - started;
    await aborted; // the fake saw its connection dropped
    const row = await job(server, id);
    expect(row.status).toBe("cancelled");
    console.info(`cancel took ${cancelMs} ms`);
  });

  test("the iteration limit fails the job with a clear error", async () => {
    const { fake, server, mcp } = await setup(undefined, { CORRAL_OLLAMA_MAX_ITERATIONS: "3" });
    fake.script("qwen2.5:7b", () => ({ toolCalls: [{ name: "list_files", arguments: {} }] }));
    const id = await call(mcp, "ollama_run_async", { prompt: "loop forever" });
    const done = await waitDone(mcp, "ollama", id);
    expect(done.startsWith("error: ")).toBe(true);
    const row = await job(server, id);
    expect(row.status).toBe("failed");
    expect(row.error).toContain("stopped after 3 model turns without a final answer");
    expect(row.error).toContain("CORRAL_OLLAMA_MAX_ITERATIONS=3");
    expect(fake.chats).toHaveLength(3);
  });

  test("an unreachable Ollama names the URL and `ollama serve`", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const server = await startServer({ CORRAL_OLLAMA_URL: url });
    cleanups.push(() => server.close());
    const mcp = await connectMcp(server, "/mcp?toolsets=ollama");
    cleanups.push(() => mcp.close());
    const id = await call(mcp, "ollama_run_async", { prompt: "hi" });
    const done = await waitDone(mcp, "ollama", id);
    expect(done).toContain(`Ollama is not reachable at ${url}`);
    expect(done).toContain("ollama serve");
    const agent = (await api<AgentWithAvailability>(server, "GET", "/api/agents/ollama")).body;
    expect(agent.availability.available).toBe(false);
    expect(agent.availability.hint).toContain("ollama serve");
  });

  test("an unknown model says to `ollama pull` it", async () => {
    const { mcp } = await setup();
    const id = await call(mcp, "ollama_run_async", { prompt: "hi", model: "mistral-nemo:12b" });
    expect(await waitDone(mcp, "ollama", id)).toContain("ollama pull mistral-nemo:12b");
  });

  test("an error line mid-stream after a 200 is surfaced", async () => {
    const { fake, server, mcp } = await setup();
    fake.script("qwen2.5:7b", () => ({ content: "Starting the", errorAfter: "an error was encountered while running the model" }));
    const id = await call(mcp, "ollama_run_async", { prompt: "hi" });
    await waitDone(mcp, "ollama", id);
    const row = await job(server, id);
    expect(row.status).toBe("failed");
    expect(row.error).toBe("Ollama stopped mid-answer (turn 1): an error was encountered while running the model");
  });

  test("users add their own Ollama agent with its own server and model", async () => {
    const { server, mcp } = await setup();
    const other = await startFakeOllama([{ name: "llama3.1:8b" }]);
    cleanups.push(() => other.close());
    other.script("llama3.1:8b", () => ({ content: "from the GPU box" }));
    const created = await api<AgentWithAvailability>(server, "POST", "/api/agents", {
      name: "gpubox",
      kind: "ollama",
      baseUrl: other.url,
      model: "llama3.1:8b",
    });
    expect(created.status).toBe(201);
    expect(created.body.availability.available).toBe(true);
    const id = await until(async () => {
      const tools = await mcp.listTools();
      return tools.tools.some((t) => t.name === "gpubox_run_async") ? call(mcp, "gpubox_run_async", { prompt: "hi" }) : undefined;
    });
    expect(await waitDone(mcp, "gpubox", id)).toContain("listo");
    expect(other.chats).toHaveLength(1);
    expect((await job(server, id)).finalText).toBe("from the GPU box");
  });
});

describe("Ollama capability checks", () => {
  const models: FakeModel[] = [
    { name: "qwen2.5:7b", loadedVram: 5_000_000_000 },
    { name: "gemma:2b", capabilities: ["completion"], family: "gemma", parameterSize: "3B", quantization: "Q4_0", contextLength: 8192 },
    { name: "nomic-embed-text:latest", capabilities: ["embedding"], family: "nomic-bert", contextLength: 2048, size: 274_302_450 },
    { name: "gpt-oss:120b-cloud", capabilities: ["completion", "tools", "thinking"], family: "gptoss", remote: true, contextLength: 131_072 },
  ];

  test("the listing is right for a tools model, a completion-only model, an embedding model and a cloud model", async () => {
    const { server, mcp } = await setup(models);
    const { status, body } = await api<OllamaModelList>(server, "GET", "/api/ollama/models");
    expect(status).toBe(200);
    expect(body.url).toBe(server.services.config.ollamaUrl);
    expect(body.version).toBe("0.12.6");
    const by = Object.fromEntries(body.models.map((m) => [m.name, m]));
    expect(by["qwen2.5:7b"]).toMatchObject({
      tools: true,
      capabilities: ["completion", "tools"],
      contextLength: 32_768,
      cloud: false,
      loaded: true,
      sizeVramBytes: 5_000_000_000,
      family: "qwen2",
      quantization: "Q4_K_M",
      probe: null,
    });
    expect(by["gemma:2b"]).toMatchObject({
      tools: false,
      capabilities: ["completion"],
      contextLength: 8192,
      family: "gemma",
      parameterSize: "3B",
      loaded: false,
      cloud: false,
    });
    expect(by["nomic-embed-text:latest"]).toMatchObject({
      tools: false,
      capabilities: ["embedding"],
      contextLength: 2048,
      sizeBytes: 274_302_450,
      cloud: false,
    });
    expect(by["gpt-oss:120b-cloud"]).toMatchObject({
      tools: true,
      cloud: true,
      remoteHost: "https://ollama.com:443",
      sizeBytes: null,
      contextLength: 131_072,
    });
    for (const m of body.models) expect(m.checkedAt).toBeGreaterThan(0);

    const text = await call(mcp, "ollama_models", {});
    expect(text).toContain("qwen2.5:7b · tools · capabilities completion,tools · context 32768");
    expect(text).toContain("loaded, 5.0 GB in VRAM");
    expect(text).toContain("gemma:2b · no tools");
    expect(text).toContain("nomic-embed-text:latest · no tools · capabilities embedding");
    expect(text).toContain(
      "gpt-oss:120b-cloud · tools · capabilities completion,tools,thinking · context 131072 · cloud (https://ollama.com:443; not free)",
    );
  });

  test("the probe tells a model whose tool calls come back as plain text from one that really calls tools, and keeps the result", async () => {
    const { fake, server, mcp } = await setup([
      { name: "real-tools:7b" },
      { name: "text-tools:7b" },
      { name: "gemma:2b", capabilities: ["completion"] },
    ]);
    fake.script("real-tools:7b", () => ({ toolCalls: [{ name: "add_numbers", arguments: { a: 17, b: 25 } }] }));
    fake.script("text-tools:7b", () => ({ content: '{"name": "add_numbers", "arguments": {"a": 17, "b": 25}}' }));

    const real = await api<OllamaProbe & { model: string }>(server, "POST", "/api/ollama/probe", { model: "real-tools:7b" });
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ model: "real-tools:7b", outcome: "calls_tools" });
    expect(real.body.detail).toContain('add_numbers({"a":17,"b":25})');
    const text = await api<OllamaProbe>(server, "POST", "/api/ollama/probe", { model: "text-tools:7b" });
    expect(text.body.outcome).toBe("text_tool_call");
    expect(text.body.detail).toContain("plain text");
    const none = await api<OllamaProbe>(server, "POST", "/api/ollama/probe", { model: "gemma:2b" });
    expect(none.body.outcome).toBe("no_tools_support");
    // The probe sends its one tool and no streaming.
    expect(fake.chats[0]).toMatchObject({ stream: false, tools: [{ function: { name: "add_numbers" } }] });

    const listed = (await api<OllamaModelList>(server, "GET", "/api/ollama/models")).body;
    const probes = Object.fromEntries(listed.models.map((m) => [m.name, m.probe]));
    expect(probes["real-tools:7b"]).toMatchObject({ outcome: "calls_tools", checkedAt: real.body.checkedAt });
    expect(probes["text-tools:7b"]?.outcome).toBe("text_tool_call");
    expect(probes["gemma:2b"]?.outcome).toBe("no_tools_support");

    const viaMcp = await call(mcp, "ollama_models", { probe: "real-tools:7b" });
    expect(viaMcp).toContain("probe real-tools:7b: calls_tools");
    expect(viaMcp).toMatch(/text-tools:7b · .* · probe text_tool_call at \d{4}-/);
  });

  test("a probe the caller gives up on stops asking Ollama, and keeps the model's last result", async () => {
    const { fake, server } = await setup([{ name: "slow:70b" }]);
    fake.script("slow:70b", () => ({ toolCalls: [{ name: "add_numbers", arguments: { a: 17, b: 25 } }] }));
    const done = await api<OllamaProbe>(server, "POST", "/api/ollama/probe", { model: "slow:70b" });
    expect(done.body.outcome).toBe("calls_tools");
    fake.script("slow:70b", () => ({ hang: true }));
    const stop = new AbortController();
    const asked = fake.chats.length;
    const probing = fetch(`${server.url}/api/ollama/probe`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "slow:70b" }),
      signal: stop.signal,
    });
    await until(() => (fake.chats.length > asked ? true : undefined), 10_000, "the probe's chat");
    const dropped = fake.nextAbort();
    stop.abort();
    await expect(probing).rejects.toThrow();
    await dropped;
    // What the stopped probe saw is not kept: the last finished probe still stands.
    const listed = (await api<OllamaModelList>(server, "GET", "/api/ollama/models")).body;
    expect(listed.models[0]?.probe).toMatchObject({ outcome: "calls_tools", checkedAt: done.body.checkedAt });
    expect((await api(server, "GET", "/api/health")).status).toBe(200);
  });

  test("bad input names the field", async () => {
    const { server } = await setup();
    const missing = await api<{ field: string }>(server, "POST", "/api/ollama/probe", {});
    expect(missing.status).toBe(400);
    expect(missing.body.field).toBe("model");
    const wrongKind = await api<{ field: string }>(server, "GET", "/api/ollama/models?agent=gemini");
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.field).toBe("agent");
  });
});
