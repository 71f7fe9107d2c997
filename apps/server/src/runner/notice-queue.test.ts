import { describe, expect, it } from "vitest";
import { noticeQueue } from "./notice-queue.js";

describe("noticeQueue: what runners NOTIFY, read in order and bounded", () => {
  it("reads in the order heard, a payload heard again before its reading began once, and one heard during its reading again", async () => {
    const read: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hear = noticeQueue(
      async (payload) => {
        read.push(payload);
        if (payload === "a") await gate;
      },
      { max: 100, onError: () => {}, onDrop: () => {} },
    );
    hear("a");
    await Promise.resolve();
    await Promise.resolve();
    // "a" is being read: heard again, it is read again after; "b" heard 1,000 times is read once.
    hear("a");
    for (let i = 0; i < 1000; i++) hear("b");
    hear("a");
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(read).toEqual(["a", "a", "b"]);
  });

  it("drops distinct payloads past its bound instead of queuing a flood, and keeps reading", async () => {
    const read: string[] = [];
    const drops: number[] = [];
    const hear = noticeQueue(
      async (payload) => {
        read.push(payload);
      },
      { max: 10, onError: () => {}, onDrop: (n) => drops.push(n) },
    );
    for (let i = 0; i < 50; i++) hear(`made-up-${i}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(read).toHaveLength(10);
    expect(drops.at(-1)).toBe(40);
    hear("real");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(read.at(-1)).toBe("real");
  });

  it("a reading that throws is reported and the next is read", async () => {
    const errors: string[] = [];
    const read: string[] = [];
    const hear = noticeQueue(
      async (payload) => {
        if (payload === "bad") throw new Error("boom");
        read.push(payload);
      },
      { max: 10, onError: (_err, payload) => errors.push(payload), onDrop: () => {} },
    );
    hear("bad");
    hear("good");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(errors).toEqual(["bad"]);
    expect(read).toEqual(["good"]);
  });
});
