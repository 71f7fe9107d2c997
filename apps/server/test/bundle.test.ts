import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { serverBuildOptions } from "../build.js";

/** Where the metafile's paths start from (`src/server.ts`), wherever the tests run. */
const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The output built from an entry point (`src/server.ts`), or from a module loaded with import() (`src/start.ts`). */
function outputOf(metafile: Metafile, entryPoint: string): string {
  const output = Object.keys(metafile.outputs).find((file) => metafile.outputs[file]?.entryPoint === entryPoint);
  if (!output) throw new Error(`no output for ${entryPoint}`);
  return output;
}

/** The source files the given outputs and every chunk they import statically are built from. */
function inputsWithStaticImports(metafile: Metafile, outputs: string[]): string[] {
  const seen = new Set(outputs);
  const queue = [...outputs];
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
    const { metafile } = await build({ ...serverBuildOptions(outdir), absWorkingDir: serverDir, write: false, metafile: true, logLevel: "silent" });
    // dist/server.js loads the server (src/start.ts) with import(), once it has held the young generation.
    const atStart = inputsWithStaticImports(metafile, [outputOf(metafile, "src/server.ts"), outputOf(metafile, "src/start.ts")]);
    const everything = Object.keys(metafile.inputs);
    const mcp = (file: string) => file.includes("/@modelcontextprotocol/") || file.endsWith("src/mcp/server-factory.ts");
    expect(everything.filter(mcp).length).toBeGreaterThan(0);
    expect(atStart.filter(mcp)).toEqual([]);
    // zod's messages in English only: the other locales were a tenth of the bundle.
    expect(everything.filter((file) => /zod\/v4\/locales\/(?!en\.js|index\.js)/.test(file))).toEqual([]);
    // The YAML library comes with a config file or an export, not with every start (@fastify/swagger's
    // import of it is a stub: Corral serves the OpenAPI document as JSON only).
    const yaml = (file: string) => /node_modules\/(\.pnpm\/yaml@[^/]+\/node_modules\/)?yaml\//.test(file);
    expect(everything.filter(yaml).length).toBeGreaterThan(0);
    expect(atStart.filter(yaml)).toEqual([]);
    // The AI SDK and its providers come with the first API job (agents/kinds/api.ts), the
    // PostgreSQL driver with a registry in PostgreSQL (db/open-registry.ts).
    const aiSdk = (file: string) => /node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(ai|@ai-sdk\/[^/]+)\//.test(file);
    const pgDriver = (file: string) => /node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?pg\//.test(file);
    for (const later of [aiSdk, pgDriver]) {
      expect(everything.filter(later).length).toBeGreaterThan(0);
      expect(atStart.filter(later)).toEqual([]);
    }
    // The native addon stays a package of its own.
    expect(everything.filter((file) => /node_modules\/better-sqlite3\//.test(file))).toEqual([]);
  });

  it("evaluates nothing before the young generation is held: dist/server.js imports only that, then the server with import()", async () => {
    const { metafile } = await build({ ...serverBuildOptions(outdir), absWorkingDir: serverDir, write: false, metafile: true, logLevel: "silent" });
    const beforeTheServer = inputsWithStaticImports(metafile, [outputOf(metafile, "src/server.ts")]);
    expect(beforeTheServer.sort()).toEqual(["src/lib/young-generation.ts", "src/server.ts"]);
    const entry = metafile.outputs[outputOf(metafile, "src/server.ts")];
    expect(entry?.imports.filter((i) => i.kind === "dynamic-import").map((i) => metafile.outputs[i.path]?.entryPoint)).toEqual(["src/start.ts"]);
  });
});
