import { describe, expect, it } from "vitest";
import { ServiceError } from "../lib/errors.js";
import { readAnswer } from "./runner-answers.js";

const listing = { path: "/w", truncated: false, entries: [{ name: "a", type: "file", size: 1, mtime: 1 }] };
const answer = (text: string, readLimit = 0) => ({ answer: text, error: null, readLimit });
const refusedWith = (fn: () => unknown, pattern: RegExp) => {
  const err = (() => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return null;
  })();
  expect(err).toBeInstanceOf(ServiceError);
  expect(err).toMatchObject({ status: 503, message: expect.stringMatching(pattern) });
};

// The server's side of a runner's answer: whatever the runner's login stored is checked before it is believed.
describe("readAnswer", () => {
  it("takes an honest listing, read and raw answer, and gives a refusal as the server's own", () => {
    expect(readAnswer(answer(JSON.stringify(listing)), "list", "box")).toEqual(listing);
    const read = { path: "/w/a", size: 3, mtime: 1, binary: false, offset: 0, length: 3, text: "abc" };
    expect(readAnswer(answer(JSON.stringify(read), 1024), "read", "box")).toEqual(read);
    const raw = { path: "/w/a", size: 3, mtime: 1, binary: false, range: null, data: "YWJj" };
    expect(readAnswer(answer(JSON.stringify(raw)), "raw", "box")).toEqual(raw);
    const refusal = { status: 404, code: "not_found", error: "no such file", field: "path" };
    expect(() => readAnswer({ answer: null, error: JSON.stringify(refusal), readLimit: 0 }, "list", "box")).toThrow(
      expect.objectContaining({ status: 404, code: "not_found", message: "no such file" }),
    );
  });

  it("refuses 10^8 entries by their size before parsing, and a million empty ones by their count", () => {
    const hundredMillion = `{"entries":[${"[],".repeat(100_000_000)}[]]}`;
    const before = process.memoryUsage().heapUsed;
    refusedWith(
      () => readAnswer(answer(hundredMillion), "list", "box"),
      /runner box sent an answer the server does not accept \(300000016 characters, over the 8355536/,
    );
    // Nothing was built from it (a parse would take gigabytes).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    refusedWith(
      () => readAnswer(answer(`{"path":"/w","truncated":false,"entries":[${"[],".repeat(1_000_000)}[]]}`), "list", "box"),
      /more than 5002 objects and arrays/,
    );
    // Brackets inside strings are text, not parts.
    const names = { ...listing, entries: [{ name: "[[[[{{{{".repeat(1000), type: "file", size: 1, mtime: 1 }] };
    expect(readAnswer(answer(JSON.stringify(names)), "list", "box")).toEqual(names);
    // A read may not be bigger than the window it asked for allows.
    refusedWith(() => readAnswer(answer(JSON.stringify({ text: "x".repeat(70 * 1024) }), 1), "read", "box"), /over the/);
  });

  it("refuses what is not its kind's schema, not JSON, or a refusal of a status the server never gives", () => {
    refusedWith(() => readAnswer(answer('{"path":"/w","truncated":false,"entries":"none"}'), "list", "box"), /entries: /);
    refusedWith(
      () => readAnswer(answer(JSON.stringify({ ...listing, entries: Array(5001).fill(listing.entries[0]) })), "list", "box"),
      /more than 5002/,
    );
    refusedWith(() => readAnswer(answer("{"), "list", "box"), /not JSON/);
    refusedWith(() => readAnswer(answer('{"path":"/w","text":"a"}', 1024), "read", "box"), /size: /);
    refusedWith(
      () => readAnswer({ answer: null, error: '{"status":200,"code":"not_found","error":"fine"}', readLimit: 0 }, "list", "box"),
      /sent a refusal the server does not accept \(status/,
    );
  });
});
