// The fake Anthropic API against the requests Claude Code 2.1.332 really sends when it defers MCP
// tools behind its tool search (captured in fixtures/samples/claude-2.1.332-tool-search.request.json):
// a scripted call of a deferred tool is preceded by a ToolSearch call, the search's own results do not
// move the script on, and an eagerly offered tool is called at once, as with Claude Code 2.1.197.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, TOOL_SEARCH } from "./fixtures/fake-llm/anthropic.js";
import type { FakeServer, Script } from "./fixtures/fake-llm/script.js";

interface Sample {
  tools: { name: string; input_schema: Record<string, unknown>; defer_loading?: boolean }[];
  messages: { role: string; content: unknown }[];
}
const sample = JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures/samples/claude-2.1.332-tool-search.request.json"), "utf8")) as Sample;
const DEFERRED = "mcp__gemini__gemini_done";

const script: Script = [
  { kind: "tool", name: DEFERRED, args: { job_id: "nope" }, usage: { input: 100, output: 10 } },
  { kind: "text", text: "done", usage: { input: 120, output: 2 } },
];

let fake: FakeServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function ask(
  body: Record<string, unknown>,
): Promise<{ status: number; body: { content?: { type: string; name?: string; input?: unknown; text?: string }[]; error?: { message: string } } }> {
  fake ??= await startFakeAnthropic(script);
  const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 1000, ...body }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

// The sample's conversation is: the prompt, ToolSearch's call and result, the tool's call and result.
const prompt = sample.messages.slice(0, 1);
const searched = sample.messages.slice(0, 3);
const beforeLoad = sample.tools.filter((t) => t.name !== DEFERRED);

describe("fake Anthropic API, Claude Code's tool search", () => {
  it("a deferred tool not loaded yet: the model calls ToolSearch with select:<name>, the input Claude Code declares", async () => {
    const answer = await ask({ tools: beforeLoad, messages: prompt });
    expect(answer.status).toBe(200);
    expect(answer.body.content).toEqual([{ type: "tool_use", id: expect.any(String), name: TOOL_SEARCH, input: { query: `select:${DEFERRED}` } }]);
  });

  it("once a tool_reference has loaded it, the scripted call is made; the search's result does not count as a script turn", async () => {
    const answer = await ask({ tools: sample.tools, messages: searched });
    expect(answer.body.content).toEqual([{ type: "tool_use", id: expect.any(String), name: DEFERRED, input: { job_id: "nope" } }]);
  });

  it("after the tool's result (with Claude Code's trailing system-reminder) the script moves to its next turn", async () => {
    const answer = await ask({ tools: sample.tools, messages: sample.messages });
    expect(answer.body.content).toEqual([{ type: "text", text: "done" }]);
  });

  it("a deferred tool listed without a tool_reference is not callable yet", async () => {
    const answer = await ask({ tools: sample.tools, messages: prompt });
    expect(answer.body.content?.[0]?.name).toBe(TOOL_SEARCH);
  });

  it("an eagerly offered tool is called at once, with no search", async () => {
    const eager = sample.tools.map(({ defer_loading: _, ...tool }) => tool);
    const answer = await ask({ tools: eager, messages: prompt });
    expect(answer.body.content?.[0]?.name).toBe(DEFERRED);
  });

  it("a tool search that no longer takes a string `query` is a 400 naming it, so a changed client fails loudly", async () => {
    const changed = beforeLoad.map((t) =>
      t.name === TOOL_SEARCH ? { ...t, input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } : t,
    );
    const answer = await ask({ tools: changed, messages: prompt });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toContain("`query`");
  });

  it("a search that did not load the tool is a 400, not a loop of searches", async () => {
    const unloaded = [
      searched[0],
      searched[1],
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake_1", content: "No matching deferred tools found" }] },
    ];
    const answer = await ask({ tools: beforeLoad, messages: unloaded });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toContain(`was asked for ${DEFERRED}`);
  });
});
