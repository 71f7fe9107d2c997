import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { OutputStream } from "@corral/shared";
import { afterAll, expect, test } from "vitest";
import { CursorError, dataFileOf, lastRawOffsets, OutputLog, readOutput, readOutputBytes, tailText } from "./output-log.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "output-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let logs = 0;

function logOf(pieces: Array<[OutputStream, string]>): string {
  const log = new OutputLog(path.join(dir, `${++logs}.log`));
  for (const [stream, text] of pieces) log.append(stream, Buffer.from(text));
  log.close();
  return log.file;
}

/** Every record boundary, in order: the cursors a reader can be handed. */
function cursorsOf(file: string): number[] {
  const cursors = [0];
  for (;;) {
    const page = readOutput(file, cursors.at(-1) as number, 1, false);
    if (page.cursor === cursors.at(-1)) return cursors;
    cursors.push(page.cursor);
  }
}

const pieces: Array<[OutputStream, string]> = [
  ["out", 'a "quoted" line\\n with a backslash\n'],
  ["out", "ü é 𝄞 €\n"],
  ["err", 'warn: {"json": true}\n'],
  ["sys", "[corral] note\n"],
  ["out", "x\n".repeat(5000)],
  ["out", "no newline yet"],
  ["out", " — ended\n"],
];
const whole = pieces.map(([, text]) => text).join("");

test("text lies in the data file as printed; the records say where, and never hold it", () => {
  const file = logOf(pieces);
  expect(readFileSync(dataFileOf(file), "utf8")).toBe(whole);
  const records = readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(records).toHaveLength(pieces.length);
  for (const [i, record] of records.entries()) {
    expect(record.d).toBeUndefined();
    expect(record.s).toBe(pieces[i]?.[0]);
    expect(record.n).toBe(Buffer.byteLength(pieces[i]?.[1] ?? ""));
  }
});

test("from every cursor, pages of any limit give the rest once, in order", () => {
  const file = logOf(pieces);
  const cursors = cursorsOf(file);
  expect(cursors).toHaveLength(pieces.length + 1);
  for (const [i, start] of cursors.entries()) {
    for (const limit of [1, 100, 4096, 1 << 20]) {
      let text = "";
      for (let cursor = start; ; ) {
        const page = readOutputBytes(file, cursor, limit);
        if (page.cursor === cursor) break;
        // At most the limit, unless one record alone is longer.
        const bytes = page.chunks.reduce((sum, c) => sum + c.data.length, 0);
        if (cursors.indexOf(page.cursor) - cursors.indexOf(cursor) > 1) expect(bytes).toBeLessThanOrEqual(limit);
        expect(page.chunks.at(-1)?.cursor).toBe(page.cursor);
        text += page.chunks.map((c) => c.data.toString("utf8")).join("");
        cursor = page.cursor;
      }
      expect(text).toBe(
        pieces
          .slice(i)
          .map(([, t]) => t)
          .join(""),
      );
    }
  }
});

test("a stream's consecutive records are read as one chunk", () => {
  const file = logOf(pieces);
  const page = readOutput(file, 0, 1 << 20);
  expect(page.chunks.map((c) => c.stream)).toEqual(["out", "err", "sys", "out"]);
  expect(page.chunks.map((c) => c.text).join("")).toBe(whole);
});

test("a cursor this log never handed out is refused", () => {
  const file = logOf(pieces);
  const size = readFileSync(file).length;
  expect(() => readOutput(file, 3, 100)).toThrow(CursorError);
  expect(() => readOutput(file, size + 1, 100)).toThrow(CursorError);
  expect(readOutput(file, size, 100)).toEqual({ chunks: [], cursor: size, size });
  expect(readOutput(path.join(dir, "never-written.log"), 0, 100)).toEqual({ chunks: [], cursor: 0, size: 0 });
});

test("bytes a crash left after the last record are never read; the next record follows them", () => {
  const file = path.join(dir, "crashed.log");
  const log = new OutputLog(file);
  log.append("out", Buffer.from("before\n"), { offset: 7, attempt: 1 });
  log.close();
  // The text of a record that was never written.
  appendFileSync(dataFileOf(file), "lost half");
  const again = new OutputLog(file);
  again.append("out", Buffer.from("after\n"), { offset: 13, attempt: 1 });
  again.close();
  expect(readOutput(file, 0, 1 << 20).chunks.map((c) => c.text)).toEqual(["before\nafter\n"]);
  expect(lastRawOffsets(file, 1)).toEqual({ out: 13, err: 0 });
});

test("half a record a crash left at the log's end is cut off; the next record starts its own line", () => {
  const file = path.join(dir, "half-record.log");
  const log = new OutputLog(file);
  log.append("out", Buffer.from("kept\n"), { offset: 5, attempt: 1 });
  log.close();
  appendFileSync(dataFileOf(file), "copied, never recorded\n");
  appendFileSync(file, '{"s":"out","p":5,"n":23,"o":');
  const again = new OutputLog(file);
  again.append("out", Buffer.from("copied again\n"), { offset: 28, attempt: 1 });
  again.close();
  expect(readOutput(file, 0, 1 << 20).chunks.map((c) => c.text)).toEqual(["kept\ncopied again\n"]);
  expect(lastRawOffsets(file, 1)).toEqual({ out: 28, err: 0 });
});

test("a log written before the data file existed reads as it did, and takes new records after its own", () => {
  const file = path.join(dir, "old.log");
  const old = [
    { s: "out", d: 'old "text"\n', o: 11, a: 1 },
    { s: "err", d: "old warning\n", o: 12, a: 1 },
    { s: "out", d: "old again ", o: 21, a: 1 },
  ];
  writeFileSync(file, old.map((r) => `${JSON.stringify(r)}\n`).join(""));
  expect(readOutput(file, 0, 1 << 20).chunks.map((c) => c.text)).toEqual(['old "text"\n', "old warning\n", "old again "]);
  const log = new OutputLog(file);
  log.append("out", Buffer.from("new\n"), { offset: 25, attempt: 1 });
  log.append("out", Buffer.from("newer\n"), { offset: 31, attempt: 1 });
  log.close();
  expect(readOutput(file, 0, 1 << 20).chunks.map((c) => [c.stream, c.text])).toEqual([
    ["out", 'old "text"\n'],
    ["err", "old warning\n"],
    ["out", "old again new\nnewer\n"],
  ]);
  expect(lastRawOffsets(file, 1)).toEqual({ out: 31, err: 12 });
  expect(tailText(file, 1000)).toBe('old "text"\nold warning\nold again new\nnewer\n');
});

test("an old record longer than a read window is still read whole, from the front and from the back", () => {
  const file = path.join(dir, "old-long.log");
  const long = "x\n".repeat(100_000);
  writeFileSync(file, `${JSON.stringify({ s: "out", d: long, o: long.length, a: 1 })}\n`);
  expect(readOutput(file, 0, 1024).chunks.map((c) => c.text)).toEqual([long]);
  expect(tailText(file, 10)).toBe(`…${long.slice(-10)}`);
});

test("the tail is the last characters of the last records, across index windows", () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} ü\n`);
  const file = logOf(lines.map((line) => ["out", line]));
  expect(tailText(file, 1 << 20)).toBe(lines.join(""));
  const tail = tailText(file, 30);
  expect(tail).toBe(`…${lines.join("").slice(-30)}`);
  expect(tailText(file, 1000, ["err"])).toBe("");
});

test("a job that prints nothing creates no file; its first text creates both, after what a crash left in the data file", () => {
  const file = path.join(dir, "silent.log");
  const silent = new OutputLog(file);
  expect(silent.size).toBe(0);
  silent.close();
  expect(existsSync(file) || existsSync(dataFileOf(file))).toBe(false);
  expect(tailText(file, 100)).toBe("");
  // Text a crash wrote before its first record was: never referenced, and the next goes after it.
  writeFileSync(dataFileOf(file), "orphan");
  const log = new OutputLog(file);
  expect(log.textBytes).toBe(6);
  log.append("out", Buffer.from("first\n"));
  log.close();
  expect(readOutput(file, 0, 1 << 20).chunks.map((c) => c.text)).toEqual(["first\n"]);
});
