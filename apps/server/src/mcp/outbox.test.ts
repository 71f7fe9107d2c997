import { createServer, type ServerResponse } from "node:http";
import net from "node:net";
import { expect, test } from "vitest";
import { McpOutbox } from "./outbox.js";

const CAP = 4 * 1024 * 1024;
const CHUNK = "x".repeat(64 * 1024);

/** Writes 200 MiB to each request's response through the outbox, as an endless answer stream would. */
async function withServer(outbox: McpOutbox, run: (port: number, responses: ServerResponse[]) => Promise<void>): Promise<void> {
  const responses: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    responses.push(res);
    res.writeHead(200, { "content-type": "text/plain" });
    let left = 3200;
    const more = () => {
      while (left-- > 0 && !res.destroyed) {
        res.write(CHUNK);
        outbox.wrote(res);
        // Past what the kernel takes, wait for a drain as a reader's stream would see one.
        if (res.writableNeedDrain) return void res.once("drain", more);
      }
      if (!res.destroyed) res.end();
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  try {
    await run(typeof address === "object" && address ? address.port : 0, responses);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test("a client that never reads is dropped once what waits for it passes the cap; one that reads gets everything", async () => {
  const outbox = new McpOutbox(CAP);
  await withServer(outbox, async (port, responses) => {
    // Never reads: the kernel's buffers fill, then the server's; past the cap the connection goes.
    const idle = net.connect(port, "127.0.0.1", () => {
      idle.pause();
      idle.write(`GET / HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    idle.on("error", () => undefined);
    const closed = new Promise((resolve) => idle.once("close", resolve));
    // Its bytes sit in the outbox until they pass the cap (the write loop stops at the first drain wait).
    for (let i = 0; i < 1600 && !responses[0]?.destroyed; i++) {
      responses[0]?.write(CHUNK);
      if (responses[0]) outbox.wrote(responses[0]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(responses[0]?.destroyed).toBe(true);
    // Reading again, the client sees its connection closed.
    idle.resume();
    await closed;
    expect(outbox.stats()).toEqual({ heldBytes: 0, dropped: 1 });

    // A reader takes all 200 MiB through the same outbox, however much it held for a moment.
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect((await res.arrayBuffer()).byteLength).toBe(3200 * CHUNK.length);
    expect(outbox.stats().dropped).toBe(1);
  });
}, 60_000);
