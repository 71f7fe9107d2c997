// Presence with the real Claude Code, each version the suite pins (2.1.197, and today's 2.1.332): the
// issue's acceptance line, "close a real Claude Code that had registered: within a minute it shows
// offline and a new session takes the name". `claude -p` with Corral's hub (`/mcp?toolsets=hub`)
// as its MCP server; the scripted model calls corral_register, and its next model request hangs, so
// Claude Code stays alive in its turn with its MCP connection up. Then it is killed with SIGTERM (no
// one ends its MCP session), and an MCP SDK client sees `reviewer` go offline and takes the name.
// A recording proxy between Claude Code and Corral shows which GET event streams it held and when
// they closed.
//
// What the builds do (HOLDS_GET_STREAM pins it, the run prints it):
// - 2.1.197 (2025-11-25, a session) opens one GET event stream on `/mcp?toolsets=hub` as it connects
//   and holds it while it runs: idle in its turn for twice the presence, it stays online with no call.
//   On SIGTERM it exits (143) and the stream closes within milliseconds; it sends no DELETE, so the
//   MCP session is never ended. The registration shows offline within the presence (about 4 s of 5),
//   not at once: the stream's last renewal counts until the presence after it runs out.
// - 2.1.332 (2026-07-28, stateless) opens no GET stream at all (and no `subscriptions/listen`), so
//   only its calls show it: idle in its turn, it is already offline before it is killed, and a new
//   registration could take the name from a window still open. Killing it changes nothing Corral sees.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { HubAgentList } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import type { FakeServer, Turn } from "../test/fixtures/fake-llm/script.js";
import { api, sleep, startServer, type TestServer, until } from "../test/helpers.js";
import { connectMcp, textOf } from "../test/mcp-client.js";
import { toolResultsIn } from "./lib/anthropic-transcript.js";
import { claudeEnv, clientBuilds, describeRun, type RunningClient, startClient } from "./lib/clients.js";
import { type HeaderProxy, startHeaderProxy } from "./lib/header-proxy.js";

/** CORRAL_HUB_PRESENCE_S here: short, so the wait is seconds; the acceptance line allows a minute. */
const PRESENCE_S = 5;
/** Whether a version holds its MCP session's GET event stream while it runs (what keeps it online without calls). */
const HOLDS_GET_STREAM: Record<string, boolean> = { "2.1.197": true, "2.1.332": false };

for (const build of clientBuilds("claude")) {
  describe(`Claude Code ${build.label}: presence`, () => {
    let server: TestServer;
    let recorder: HeaderProxy;
    let fake: FakeServer;
    let observer: Client | undefined;
    let claude: RunningClient | undefined;
    let home: string;
    let project: string;

    beforeAll(async () => {
      server = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S) });
      recorder = await startHeaderProxy(server.url);
      home = path.join(server.root, "home");
      project = path.join(server.root, "project");
      mkdirSync(home, { recursive: true });
      mkdirSync(project, { recursive: true });
      const script: Turn[] = [
        {
          kind: "tool",
          name: "mcp__corral__corral_register",
          args: { name: "reviewer", session: "review", label: "a Claude Code window" },
          usage: { input: 900, output: 30 },
        },
        // Claude Code waits on its model from here on: alive, its MCP connection up, no more calls.
        { kind: "hang" },
      ];
      fake = await startFakeAnthropic(script);
      const added = await startClient(
        build.bin,
        ["mcp", "add", "--transport", "http", "corral", `${recorder.url}/mcp?toolsets=hub`, "--header", `Authorization: Bearer ${server.token}`],
        { cwd: project, env: claudeEnv(home, null), timeoutMs: 60_000 },
      ).ended;
      expect(added.code, describeRun(added)).toBe(0);
    }, 90_000);

    afterAll(async () => {
      if (claude && !claude.exited()) process.kill(-claude.pid, "SIGKILL");
      await observer?.close();
      await fake?.close();
      await recorder?.close();
      await server?.close();
    });

    const agentsLine = async () =>
      textOf(await observer!.callTool({ name: "corral_agents", arguments: { session: "review" } }))
        .split("\n")
        .find((line) => line.startsWith("reviewer ")) ?? "";

    it("killed after registering, it shows offline within the presence and a new session takes the name", async () => {
      claude = startClient(
        build.bin,
        ["-p", "Join the review in Corral as reviewer.", "--model", "claude-sonnet-4-5", "--output-format", "json", "--allowedTools", "mcp__corral"],
        // 2.1.197 lets the model go before its MCP servers are connected (its first call then answers
        // "still connecting"); `MCP_CONNECTION_NONBLOCKING=0` makes it connect first, as the model's
        // register call needs.
        { cwd: project, env: { ...claudeEnv(home, fake.url), MCP_CONNECTION_NONBLOCKING: "0" }, timeoutMs: 240_000 },
      );
      const running = claude;

      // Registered, and its model has the answer: the request after corral_register's result is the one that hangs.
      const answered = await until(
        () => fake.requests.map((r) => toolResultsIn(r.body)[0]).find((result) => result !== undefined),
        120_000,
        "Claude Code to send the model corral_register's result",
      ).catch(async (err: Error) => {
        process.kill(-running.pid, "SIGKILL");
        throw new Error(`${err.message}\n${describeRun(await running.ended)}`);
      });
      expect(answered.isError, answered.text).toBe(false);
      expect(answered.text).toMatch(/^registered as reviewer in session review/m);
      const oldHandle = /^handle: (\S+)$/m.exec(answered.text)?.[1];
      expect(oldHandle, answered.text).toBeTruthy();

      observer = await connectMcp(server, "/mcp?toolsets=hub");
      const holds = HOLDS_GET_STREAM[build.version];
      expect(holds, `say in HOLDS_GET_STREAM whether Claude Code ${build.version} holds a GET stream`).toBeTypeOf("boolean");
      if (holds) {
        expect(await agentsLine()).toMatch(/^reviewer \(client\) · online/);
        // Taken while it is online: refused.
        expect(textOf(await observer.callTool({ name: "corral_register", arguments: { name: "reviewer", session: "review" } }))).toMatch(
          /^error: name: the name reviewer is taken/,
        );
      }

      // Alive and idle (its model request hangs) for twice the presence: is it held online without calls?
      await sleep(2 * PRESENCE_S * 1000 + 1000);
      const idle = await api<HubAgentList>(server, "GET", "/api/conversations/review/agents");
      const heldWhileIdle = idle.body.agents.find((a) => a.name === "reviewer")?.online === true;
      const gets = () => recorder.exchanges.filter((e) => e.request.startsWith("GET"));
      const openStreams = gets().filter((e) => e.endedAt === undefined);
      expect(running.exited(), "Claude Code is still in its turn").toBe(false);
      expect(heldWhileIdle, JSON.stringify(recorder.exchanges, null, 1)).toBe(holds);
      expect(openStreams.length, JSON.stringify(gets(), null, 1)).toBe(holds ? 1 : 0);

      // Closed as a window is closed: SIGTERM to Claude Code alone, nothing sent on its behalf.
      const killedAt = Date.now();
      process.kill(running.pid, "SIGTERM");
      const run = await Promise.race([running.ended, sleep(20_000).then(() => undefined)]);
      if (!run) process.kill(-running.pid, "SIGKILL");
      const exit = run ?? (await running.ended);

      const offline = await until(
        async () => {
          const line = await agentsLine();
          return /^reviewer \(client\) · offline/.test(line) ? line : undefined;
        },
        60_000,
        "reviewer to show offline in corral_agents",
      );
      const offlineAfterS = (Date.now() - killedAt) / 1000;
      expect(offline).toMatch(/^reviewer \(client\) · offline · last seen \d+ s ago/);

      // A new session takes the name at once; the closed window's handle then says to register again.
      const taken = textOf(await observer.callTool({ name: "corral_register", arguments: { name: "reviewer", session: "review" } }));
      expect(taken).toMatch(/^registered as reviewer in session review/m);
      expect(await agentsLine()).toMatch(/^reviewer \(client\) · online/);
      expect(textOf(await observer.callTool({ name: "corral_receive", arguments: { handle: oldHandle, timeout_s: 0 } }))).toMatch(
        /^error: handle: no live registration has this handle: .*another registration took its name while it was offline/,
      );

      // What Claude Code did, written down by the test run.
      const streams = gets().map((e) => ({
        request: e.request,
        status: e.status,
        protocolVersion: e.protocolVersion,
        openedBeforeKillS: (killedAt - e.startedAt) / 1000,
        closedAfterKillS: e.endedAt === undefined ? null : (e.endedAt - killedAt) / 1000,
      }));
      const deletes = recorder.exchanges.filter((e) => e.request.startsWith("DELETE") && e.startedAt >= killedAt);
      console.log(
        JSON.stringify(
          {
            claudeCode: build.label,
            heldOnlineWhileIdleFor2xPresence: heldWhileIdle,
            openGetStreamsAtKill: openStreams.length,
            getStreams: streams,
            deletesAfterKill: deletes.map((e) => e.request),
            exit: exit.signal ?? exit.code,
            offlineAfterKillS: offlineAfterS,
          },
          null,
          1,
        ),
      );
      expect(offlineAfterS).toBeLessThan(60);
      // Nobody said goodbye: the stream it held closed with the process, and no DELETE ended its session.
      expect(deletes).toEqual([]);
      for (const stream of openStreams) expect((stream.endedAt ?? Number.POSITIVE_INFINITY) - killedAt).toBeLessThan(20_000);
    }, 240_000);
  });
}
