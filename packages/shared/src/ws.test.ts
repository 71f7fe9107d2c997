import { expect, test } from "vitest";
import { outputHead, parseServerMessage } from "./ws.js";

test("an output message is its head line and then its text as is, whatever the text holds", () => {
  const text = 'line "one"\n{"type":"error","message":"not me"}\n\\n ü 𝄞\n';
  const wire = outputHead({ jobId: "j1", stream: "err", cursor: 42 }) + text;
  expect(wire.slice(wire.indexOf("\n") + 1)).toBe(text);
  expect(parseServerMessage(wire)).toEqual({ type: "output", jobId: "j1", stream: "err", cursor: 42, text });
  expect(parseServerMessage(outputHead({ jobId: "j1", stream: "out", cursor: 7 }))).toMatchObject({ text: "" });
});

test("every other message is one JSON object; anything else throws", () => {
  expect(parseServerMessage(JSON.stringify({ type: "caught_up", jobId: "j1", cursor: 3 }))).toEqual({ type: "caught_up", jobId: "j1", cursor: 3 });
  expect(() => parseServerMessage("not json")).toThrow();
  expect(() => parseServerMessage(JSON.stringify({ type: "nope" }))).toThrow();
  // A head line that is not an output head is refused, not read as one.
  expect(() => parseServerMessage(`${JSON.stringify({ type: "status", jobId: "j1" })}\ntext`)).toThrow();
});
