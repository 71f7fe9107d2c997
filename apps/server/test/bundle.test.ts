import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, type Metafile } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { serverBuildOptions } from "../build.js";

/** The source files a start reads: the entry's output and every chunk it imports statically. */
function loadedAtStart(metafile: Metafile): string[] {
  const entry = Object.keys(metafile.outputs).find((file) => file.endsWith("/server.js"));
  if (!entry) throw new Error("no server.js among the outputs");
  const seen = new Set([entry]);
  const queue = [entry];
  for (let file = queue.pop(); file; file = queue.pop()) {
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.kind === "import-statement" && imported.path in metafile.outputs && !seen.has(imported.path)) {
        seen.add(imported.path);
        queue.push(imported.path);
      }
    }
  }
  return [...seen].flatMap((file) => Object.keys(metafile.outputs[file]?.inputs ?? {}));
}

describe("the server bundle (pnpm build)", () => {
  const outdir = mkdtempSync(path.join(os.tmpdir(), "corral-bundle-"));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("leaves what a start does not need for later: the MCP SDK and the tools come with the first MCP session", async () => {
    const { metafile } = await build({ ...serverBuildOptions(outdir), write: false, metafile: true, logLevel: "silent" });
    const atStart = loadedAtStart(metafile);
    const everything = Object.keys(metafile.inputs);
    const mcp = (file: string) => file.includes("/@modelcontextprotocol/sdk/") || file.endsWith("src/mcp/server-factory.ts");
    expect(everything.filter(mcp).length).toBeGreaterThan(0);
    expect(atStart.filter(mcp)).toEqual([]);
    // zod's messages in English only: the other locales were a tenth of the bundle.
    expect(everything.filter((file) => /zod\/v4\/locales\/(?!en\.js|index\.js)/.test(file))).toEqual([]);
    // The YAML library comes with a config file or an export, not with every start (@fastify/swagger's
    // import of it is a stub: Corral serves the OpenAPI document as JSON only).
    const yaml = (file: string) => /node_modules\/(\.pnpm\/yaml@[^/]+\/node_modules\/)?yaml\//.test(file);
    expect(everything.filter(yaml).length).toBeGreaterThan(0);
    expect(atStart.filter(yaml)).toEqual([]);
    // The native addon stays a package of its own.
    expect(everything.filter((file) => /node_modules\/better-sqlite3\//.test(file))).toEqual([]);
  });
});
