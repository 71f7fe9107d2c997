import { describe, expect, it } from "vitest";
import { sseEvents } from "./sse.js";
import { ascendingId, clockValue, idValue } from "./turn.js";

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(chunks: string[]) {
  const events = [];
  for await (const ev of sseEvents(body(chunks))) events.push(ev);
  return events;
}

describe("OpenCode's event stream", () => {
  it("reads events cut anywhere, with CRLF, multi-line data and fields other than data", async () => {
    const events = await all([
      'data: {"type":"a",',
      '"n":1}\r\n\r\n: comment\nretry: 10\n',
      'data: {"type":\ndata: "b"}\n\n',
      "data: not json\n\n",
      'data:{"type":"c"}\n\n',
    ]);
    expect(events).toEqual([{ type: "a", n: 1 }, { type: "b" }, { type: "c" }]);
  });

  it("keeps a multi-byte character split across chunks whole", async () => {
    const bytes = new TextEncoder().encode('data: {"text":"héron"}\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 17));
        controller.enqueue(bytes.slice(17));
        controller.close();
      },
    });
    const events = [];
    for await (const ev of sseEvents(stream)) events.push(ev);
    expect(events).toEqual([{ text: "héron" }]);
  });
});

describe("OpenCode's ascending ids", () => {
  it("are made in OpenCode's format and sort right after the id whose value they follow", () => {
    // Real ids from OpenCode 1.18.33's event stream, in the order it made them.
    const connected = "evt_22ea3877c001uFXPQAWLd68k5d";
    const later = "msg_22ea38c60001hHdsTo0rxyIGnd";
    const ours = ascendingId("msg", (idValue(connected) ?? 0n) + 1n);
    expect(ours).toMatch(/^msg_22ea3877c002[0-9A-Za-z]{14}$/);
    expect(ours.slice(4) > connected.slice(4) && ours < later).toBe(true);
    expect(idValue("ses_nothex")).toBeUndefined();
  });

  it("wrap at 48 bits as OpenCode's do", () => {
    expect(ascendingId("msg", (1n << 48n) + 5n)).toMatch(/^msg_000000000005/);
    expect(clockValue()).toBeLessThan(1n << 48n);
  });
});
