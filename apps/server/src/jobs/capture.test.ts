import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { Capture } from "./capture.js";
import { OutputLog, readOutput } from "./output-log.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function capture(out: Buffer, err: Buffer = Buffer.alloc(0)) {
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
  run.finish();
  log.close();
  const chunks = readOutput(log.file, 0, 1 << 24).chunks;
  return { chunks, parsed: texts.join("") };
}

test("a character split across reads arrives whole", () => {
  // 64 KiB reads: put a 3-byte character across the first boundary.
  const text = `${"a".repeat(64 * 1024 - 1)}€ and more`;
  const { chunks, parsed } = capture(Buffer.from(text), Buffer.from("warn\n"));
  expect(
    chunks
      .filter((c) => c.stream === "out")
      .map((c) => c.text)
      .join(""),
  ).toBe(text);
  expect(chunks.find((c) => c.stream === "err")?.text).toBe("warn\n");
  expect(parsed).toBe(`${text}warn\n`);
});

test("a worker that ends inside a character still gets its last bytes logged", () => {
  const { chunks } = capture(Buffer.concat([Buffer.from("done "), Buffer.from("€").subarray(0, 2)]));
  expect(chunks.map((c) => c.text).join("")).toBe("done \ufffd");
});
