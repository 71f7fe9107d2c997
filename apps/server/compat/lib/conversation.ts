// What an LLM request carries: the conversation of a model API request in any of the fakes'
// shapes, to check that a follow-up's request carries the earlier turn.
import { asArray, isRecord, type FakeServer, type RecordedRequest } from "../../test/fixtures/fake-llm/script.js";

/** One message of a request's conversation, whatever the API's shape. */
export interface Said {
  role: "user" | "assistant" | "other";
  text: string;
}

/** The text of a content value: a string, or blocks/parts with `text` (input_text, output_text, text). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .map((block) => (isRecord(block) && typeof block.text === "string" ? block.text : ""))
    .join("\n");
}

/** The conversation a request sends: Anthropic and Chat Completions `messages`, Gemini `contents`, Responses `input`. */
export function conversation(body: unknown): Said[] {
  if (!isRecord(body)) return [];
  const items = asArray(body.messages ?? body.contents ?? body.input);
  return items.filter(isRecord).map((item) => {
    const role = item.role === "user" ? "user" : item.role === "assistant" || item.role === "model" ? "assistant" : "other";
    return { role, text: textOf(item.content ?? item.parts) };
  });
}

/** The agent loop's requests: those offering tools (not titles, quota probes or side calls). */
export const mainRequests = (fake: FakeServer): RecordedRequest[] =>
  fake.requests.filter((r) => isRecord(r.body) && asArray(r.body.tools).length > 0);

/** Index of the first message at or after `from` with this role containing `text`, or -1. */
export const find = (said: Said[], role: Said["role"], text: string, from = 0) =>
  said.findIndex((s, i) => i >= from && s.role === role && s.text.includes(text));
