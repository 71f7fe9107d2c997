import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { Capture } from "./capture.js";
import { dataFileOf, lastRawOffsets, OutputLog, readOutput } from "./output-log.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function capture(out: Buffer, err: Buffer = Buffer.alloc(0)) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "capture-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "out"), out);
  writeFileSync(path.join(dir, "err"), err);
  const log = new OutputLog(path.join(dir, "log"));
  const texts: string[] = [];
  const run = new Capture(
    log,
    { out: path.join(dir, "out"), err: path.join(dir, "err") },
    { out: 0, err: 0 },
    () => {},
    (t) => texts.push(t),
    1,
  );
  await run.finish();
  log.close();
  const chunks = readOutput(log.file, 0, 1 << 24).chunks;
  return { chunks, parsed: texts.join("") };
}

test("a character split across reads arrives whole", async () => {
  // 256 KiB reads: put a 3-byte character across the first boundary.
  const text = `${"a".repeat(256 * 1024 - 1)}€ and more`;
  const { chunks, parsed } = await capture(Buffer.from(text), Buffer.from("warn\n"));
  expect(
    chunks
      .filter((c) => c.stream === "out")
      .map((c) => c.text)
      .join(""),
  ).toBe(text);
  expect(chunks.find((c) => c.stream === "err")?.text).toBe("warn\n");
  expect(parsed).toBe(`${text}warn\n`);
});

test("a worker that ends inside a character still gets its last bytes logged", async () => {
  const { chunks } = await capture(Buffer.concat([Buffer.from("done "), Buffer.from("€").subarray(0, 2)]));
  expect(chunks.map((c) => c.text).join("")).toBe("done \ufffd");
});

test("bytes that are no UTF-8 are logged as U+FFFD, so the log's text is always valid", async () => {
  const { chunks, parsed } = await capture(Buffer.concat([Buffer.from("bad "), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from(" end\n")]));
  const text = chunks.map((c) => c.text).join("");
  expect(text).toBe(Buffer.from([0x62, 0x61, 0x64, 0x20, 0xff, 0xc3, 0x28, 0x20, 0x65, 0x6e, 0x64, 0x0a]).toString("utf8"));
  expect(text).toContain("\ufffd");
  expect(parsed).toBe(text);
});

test("a server stopped while a character is half read resumes at its first byte", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "capture-"));
  dirs.push(dir);
  const raw = { out: path.join(dir, "out"), err: path.join(dir, "err") };
  writeFileSync(raw.out, Buffer.concat([Buffer.from("one\ntwo "), Buffer.from("€").subarray(0, 2)]));
  writeFileSync(raw.err, "");
  const file = path.join(dir, "log");
  const first = new Capture(
    new OutputLog(file),
    raw,
    { out: 0, err: 0 },
    () => {},
    () => {},
    1,
  );
  first.start();
  await new Promise((resolve) => setTimeout(resolve, 50));
  // The server stops; the worker goes on and finishes the character.
  first.detach();
  appendFileSync(raw.out, Buffer.concat([Buffer.from("€").subarray(2), Buffer.from(" three\n")]));
  const offsets = lastRawOffsets(file, 1);
  expect(offsets.out).toBe(Buffer.byteLength("one\ntwo "));
  const log = new OutputLog(file);
  await new Capture(
    log,
    raw,
    offsets,
    () => {},
    () => {},
    1,
  ).finish();
  log.close();
  expect(
    readOutput(file, 0, 1 << 20)
      .chunks.map((c) => c.text)
      .join(""),
  ).toBe("one\ntwo € three\n");
  expect(readFileSync(dataFileOf(file), "utf8")).toBe("one\ntwo € three\n");
});

test("copying what a worker left behind lets other work run between passes", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "capture-"));
  dirs.push(dir);
  const raw = { out: path.join(dir, "out"), err: path.join(dir, "err") };
  writeFileSync(raw.out, Buffer.alloc(8 * 1024 * 1024, "x\n"));
  writeFileSync(raw.err, "");
  const log = new OutputLog(path.join(dir, "log"));
  const order: string[] = [];
  const run = new Capture(
    log,
    raw,
    { out: 0, err: 0 },
    () => order.push("chunk"),
    () => {},
    1,
  );
  setImmediate(() => order.push("other"));
  await run.finish();
  log.close();
  expect(order.indexOf("other")).toBeGreaterThan(0);
  expect(order.indexOf("other")).toBeLessThan(order.lastIndexOf("chunk"));
  expect(
    readOutput(log.file, 0, 1 << 24)
      .chunks.map((c) => c.text)
      .join(""),
  ).toBe("x\n".repeat(4 * 1024 * 1024));
});

test("raw files that are not there yet, or not any more, are waited for: nothing is thrown from a timer", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "capture-"));
  dirs.push(dir);
  const log = new OutputLog(path.join(dir, "log"));
  const texts: string[] = [];
  const run = new Capture(
    log,
    { out: path.join(dir, "out"), err: path.join(dir, "err") },
    { out: 0, err: 0 },
    () => {},
    (t) => texts.push(t),
    1,
  );
  // Thrown from the capture's timer, this would be an uncaught exception and fail the run.
  run.start();
  await new Promise((resolve) => setTimeout(resolve, 300));
  writeFileSync(path.join(dir, "out"), "late\n");
  await expect.poll(() => texts.join("")).toBe("late\n");
  rmSync(path.join(dir, "err"), { force: true });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await run.finish();
  log.close();
  expect(readOutput(log.file, 0, 1 << 20).chunks.map((c) => c.text)).toEqual(["late\n"]);
});
