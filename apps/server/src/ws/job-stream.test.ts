import type { Job, OutputStream } from "@corral/shared";
import { expect, it } from "vitest";
import type { ByteChunk, OutputRecords } from "../jobs/output-log.js";
import { SEND_BUFFER_CAP } from "./connection.js";
import type { StreamSink, Turn } from "./stream-sink.js";
import { JobStream, PAGE_BYTES } from "./job-stream.js";

/** A connection's queue as Connection keeps it (turns only at half the cap), nothing ever written out. */
class QueueSink implements StreamSink {
  queued = 0;
  /** What was queued when each message was added. */
  readonly sentAt: { what: string; queued: number }[] = [];
  private readonly waiting: Turn[] = [];

  send(message: { type: string }): void {
    this.add(message.type, 1500);
  }
  sendOutput(_jobId: string, _stream: OutputStream, data: Buffer): void {
    this.add("output", 80 + data.length);
  }
  congested(): boolean {
    return this.queued > SEND_BUFFER_CAP;
  }
  whenRoom(turn: Turn): void {
    this.waiting.push(turn);
  }
  caughtBehind(): void {}
  failed(err: unknown): void {
    throw err;
  }
  /** Gives the next waiting turn, as Connection.grant does: only while the queue is at most half the cap. */
  async grant(): Promise<boolean> {
    if (this.queued > SEND_BUFFER_CAP / 2) return false;
    const turn = this.waiting.shift();
    if (!turn) return false;
    await turn(true);
    return true;
  }
  add(what: string, bytes: number): void {
    this.sentAt.push({ what, queued: this.queued });
    this.queued += bytes;
  }
}

const job = { id: "j1", status: "running", usage: {} } as unknown as Job;
const page = (bytes: number): OutputRecords<ByteChunk> => ({
  chunks: [{ stream: "out", data: Buffer.alloc(bytes, "x"), cursor: bytes }],
  cursor: bytes,
  size: bytes,
});

it("a catch-up read that takes a while (PostgreSQL) sends nothing big once others' live output filled the queue meanwhile", async () => {
  const sink = new QueueSink();
  let filesRead: () => void = () => {};
  const stream = new JobStream(
    "j1",
    0,
    {
      job: async () => job,
      // Resolves when the test says: meanwhile the other streams' live output fills the queue.
      files: () => new Promise((resolve) => (filesRead = () => resolve([]))),
      output: (cursor) => (cursor === 0 ? page(PAGE_BYTES) : page(0)),
    },
    sink,
  );
  expect(await sink.grant()).toBe(true);
  expect(sink.sentAt.map((s) => s.what)).toEqual(["status"]);
  // Granted at an empty queue; while the files are read, live output of other jobs brings it to the cap.
  const turn = sink.grant();
  await Promise.resolve();
  sink.add("others' live output", SEND_BUFFER_CAP);
  filesRead();
  await turn;
  // Nothing was added past the cap: the page waits for a turn the queue has room for.
  expect(sink.sentAt.filter((s) => s.queued >= SEND_BUFFER_CAP)).toEqual([]);
  expect(await sink.grant()).toBe(false);
  sink.queued = 0;
  expect(await sink.grant()).toBe(true);
  expect(sink.sentAt.at(-1)).toEqual({ what: "output", queued: 0 });
  stream.stop();
});
