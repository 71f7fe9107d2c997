import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import { expect, test } from "vitest";
import { McpOutbox } from "./outbox.js";
import { sendWebResponse } from "./web-response.js";

/** A real HTTP server whose every request is answered with `answer(res)`; its promise is what `sent` collects. */
async function withServer(
  answer: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  run: (port: number, sent: Promise<void>[]) => Promise<void>,
): Promise<void> {
  const sent: Promise<void>[] = [];
  const server = createServer((req, res) => void sent.push(answer(req, res)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  try {
    await run(typeof address === "object" && address ? address.port : 0, sent);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A stream the SDK would make: chunks pushed without regard to whether anyone reads, and a record of its cancel. */
function sdkStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      cancelled = true;
    },
  });
  return { stream, controller, cancelled: () => cancelled };
}

const sse = (body: ReadableStream<Uint8Array>) => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
const frame = (text: string) => new TextEncoder().encode(`event: message\ndata: ${text}\n\n`);

test("each chunk reaches the client as the SDK makes it, then the response ends", async () => {
  const { stream, controller } = sdkStream();
  await withServer(
    (_req, res) => sendWebResponse(sse(stream), res, new McpOutbox(1024 * 1024)),
    async (port, sent) => {
      controller.enqueue(frame("progress"));
      const res = await fetch(`http://127.0.0.1:${port}/`);
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("progress");
      controller.enqueue(frame("answer"));
      controller.close();
      let rest = "";
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
      expect(rest).toContain("answer");
      await Promise.all(sent);
    },
  );
});

test("a stream that fails mid-answer ends that connection; the send resolves and the server goes on", async () => {
  const { stream, controller } = sdkStream();
  await withServer(
    (_req, res) => sendWebResponse(sse(stream), res, new McpOutbox(1024 * 1024)),
    async (port, sent) => {
      controller.enqueue(frame("progress"));
      const res = await fetch(`http://127.0.0.1:${port}/`);
      const reader = res.body!.getReader();
      await reader.read();
      controller.error(new Error("the SDK's stream broke"));
      await expect(reader.read()).rejects.toThrow();
      await expect(Promise.all(sent)).resolves.toBeDefined();
    },
  );
});

test("a client that left before the answer was made: the send resolves at once and cancels the SDK's stream", async () => {
  const { stream, controller, cancelled } = sdkStream();
  controller.enqueue(frame("the answer"));
  await withServer(
    async (_req, res) => {
      // The answer comes after the client has gone, as a tool's may.
      await new Promise((resolve) => res.once("close", resolve));
      await sendWebResponse(sse(stream), res, new McpOutbox(1024 * 1024));
    },
    async (port, sent) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.end("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      socket.on("error", () => undefined);
      await new Promise((resolve) => socket.once("close", resolve));
      await Promise.all(sent);
      expect(cancelled()).toBe(true);
    },
  );
});

test("a client that leaves mid-stream cancels the SDK's stream", async () => {
  const { stream, controller, cancelled } = sdkStream();
  await withServer(
    (_req, res) => sendWebResponse(sse(stream), res, new McpOutbox(1024 * 1024)),
    async (port, sent) => {
      controller.enqueue(frame("progress"));
      const aborted = new AbortController();
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: aborted.signal });
      await res.body!.getReader().read();
      aborted.abort();
      await Promise.all(sent);
      expect(cancelled()).toBe(true);
    },
  );
});

test("what a client that never reads is sent is counted by the outbox: past its cap the response is dropped and the SDK's stream cancelled", async () => {
  const outbox = new McpOutbox(256 * 1024);
  const { stream, controller, cancelled } = sdkStream();
  await withServer(
    (_req, res) => sendWebResponse(sse(stream), res, outbox),
    async (port, sent) => {
      const idle = net.connect(port, "127.0.0.1", () => {
        idle.pause();
        idle.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      });
      idle.on("error", () => undefined);
      const closed = new Promise((resolve) => idle.once("close", resolve));
      // Progress the SDK goes on making, 64 KiB a turn, as long as the call lasts (here: until dropped).
      const chunk = frame("x".repeat(64 * 1024));
      for (let i = 0; i < 4000 && !cancelled(); i++) {
        controller.enqueue(chunk);
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(cancelled()).toBe(true);
      expect(outbox.stats().dropped).toBe(1);
      await Promise.all(sent);
      idle.resume();
      await closed;
    },
  );
});
