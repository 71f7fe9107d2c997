// The real OpenCode 1.18.33 (`opencode serve`, with a password and Corral as its MCP server) registers
// itself in hub session `review` with its own port (corral_register's `server`), its model the fake
// OpenAI API. Another agent, an MCP SDK client, sends it a message while its turn runs a tool: the
// message lands in that running turn, and the turn's answer comes back to the sender as a message.
import type { ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { HubAgentList } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import type { FakeServer, RecordedRequest, Script } from "../test/fixtures/fake-llm/script.js";
import { api, startServer, type TestServer, until } from "../test/helpers.js";
import { connectMcp, textOf } from "../test/mcp-client.js";
import { FAKE_OPENCODE_MODEL, opencodeConfig } from "./lib/jobs.js";
import { serveOpencode } from "./lib/opencode-serve.js";

const PASSWORD = "compat-live-secret";
const auth = { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}` };
const ANSWER = "Reviewed parser.ts: line 12 leaks a handle.";

/** A chat request's user texts. */
const userTexts = (request: RecordedRequest) =>
  ((request.body as { messages?: { role: string; content: unknown }[] }).messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

describe("a real OpenCode 1.18.33 registers itself with its port and is reached inside its running turn", () => {
  let server: TestServer;
  let fake: FakeServer;
  let opencode: ChildProcess | undefined;
  let alice: Client | undefined;
  let url: string;
  let workdir: string;
  // The model's first step registers; its port is known once the server has printed it.
  const register = { name: "opencode-win", session: "review", label: "the OpenCode window", server: { port: 0, password: PASSWORD } };

  beforeAll(async () => {
    // Turns by the tool results a request carries: register, then a shell command that waits for
    // the test's file (the turn is running when the message comes), then the answer.
    const script: Script = [
      { kind: "tool", name: "corral_corral_register", args: register, usage: { input: 900, output: 40 } },
      {
        kind: "tool",
        name: "bash",
        args: { command: "while [ ! -f go ]; do sleep 0.2; done; echo released", description: "Wait" },
        usage: { input: 1000, output: 30 },
      },
      { kind: "text", text: ANSWER, usage: { input: 1200, output: 12 } },
    ];
    fake = await startFakeOpenAI(script);
    server = await startServer();
    workdir = path.join(server.root, "project");
    mkdirSync(workdir, { recursive: true });
    const home = path.join(server.root, "opencode-home");
    mkdirSync(home, { recursive: true });
    const env = opencodeConfig(server.root, fake.url);
    // Corral as OpenCode's MCP server, with the token, as a user adds it.
    const file = env.OPENCODE_CONFIG as string;
    const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    config.mcp = { corral: { type: "remote", url: `${server.url}/mcp?toolsets=hub`, headers: server.auth, oauth: false, enabled: true } };
    writeFileSync(file, JSON.stringify(config));
    const served = await serveOpencode(home, workdir, { ...env, OPENCODE_SERVER_PASSWORD: PASSWORD });
    opencode = served.child;
    url = served.url;
    register.server.port = Number(new URL(url).port);
  }, 90_000);

  afterAll(async () => {
    await alice?.close();
    if (opencode?.pid) process.kill(-opencode.pid, "SIGKILL");
    await server?.close();
    await fake?.close();
  });

  it("registers over MCP in session review; a message from another agent lands in its running turn and its answer comes back as a message", async () => {
    // The window's conversation: a session of the server, its model asked to join the review.
    const created = await fetch(`${url}/session`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "window" }),
    });
    const session = ((await created.json()) as { id: string }).id;
    const [providerID, modelID] = FAKE_OPENCODE_MODEL.split("/");
    const prompted = await fetch(`${url}/session/${session}/prompt_async`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ parts: [{ type: "text", text: "Join the review in Corral." }], model: { providerID, modelID } }),
    });
    expect(prompted.status).toBe(204);

    const registered = await until(
      async () => {
        const res = await api<HubAgentList>(server, "GET", "/api/conversations/review/agents");
        return res.body.agents.find((a) => a.name === "opencode-win" && a.online);
      },
      90_000,
      "OpenCode's model to register",
    );
    expect(registered.liveAt).toBe(url);
    // The registration's answer, as OpenCode's model read it (the tool result in the next request).
    const afterRegister = await until(
      () => fake.requests.find((r) => JSON.stringify(r.body).includes("registered as opencode-win")),
      60_000,
      "the tool result",
    );
    const result = ((afterRegister.body as { messages: { role: string; content: unknown }[] }).messages ?? []).find((m) => m.role === "tool");
    expect(String(result?.content)).toContain(`Messages to you are posted into the latest session of ${url}`);
    // The model wrote the password in its call; the answer never gives it back.
    expect(String(result?.content)).not.toContain(PASSWORD);

    alice = await connectMcp(server, "/mcp?toolsets=hub");
    const handle = /handle: (\S+)/.exec(
      textOf(await alice.callTool({ name: "corral_register", arguments: { name: "alice", session: "review" } })),
    )?.[1];
    // The model has the registration's answer: its next step is the shell command, so the turn is busy when the message comes.
    const sent = textOf(await alice.callTool({ name: "corral_send", arguments: { handle, to: "opencode-win", text: "please review parser.ts" } }));
    expect(sent).toMatch(/^sent #\d+ to opencode-win; it went into opencode-win's running session/);

    // Stored in the window's session while its loop waits on the command; then the command ends.
    await until(
      async () => {
        const messages = (await fetch(`${url}/session/${session}/message`, { headers: auth }).then((r) => r.json())) as {
          parts: { text?: string }[];
        }[];
        return messages.some((m) => m.parts.some((p) => p.text?.includes("please review parser.ts"))) ? true : undefined;
      },
      30_000,
      "the message in OpenCode's session",
    );
    writeFileSync(path.join(workdir, "go"), "");

    const answer = textOf(await alice.callTool({ name: "corral_receive", arguments: { handle, timeout_s: 120 } }));
    expect(answer).toMatch(/^1 message\(s\)\n--- #\d+ from opencode-win to alice/);
    expect(answer).toContain(ANSWER);
    // One loop: the model's request after the command's result carries the window's prompt, then alice's message.
    const last = fake.requests.find(
      (r) => (r.body as { tools?: unknown[] }).tools?.length && JSON.stringify(r.body).includes("please review parser.ts"),
    );
    const users = last ? userTexts(last) : [];
    expect(users[0]).toContain("Join the review in Corral.");
    expect(users.at(-1)).toContain("[Corral: a message from alice in session review; your reply is sent back to alice]");
  }, 240_000);
});
