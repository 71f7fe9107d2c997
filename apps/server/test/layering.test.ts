import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  cycleText,
  importCycles,
  importGraph,
  importSpecifiers,
  layerCycles,
  layerGraph,
  layerOf,
  readSources,
  resolveImport,
  unplacedLayers,
  upwardImports,
} from "./import-graph.js";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src");

/**
 * The server's floors, top first: a file imports its own floor or the ones below, never one
 * above. Two layers of one floor may import each other one way only (no cycle between layers).
 * A new top-level folder or root file is placed here before the test passes.
 */
const FLOORS: readonly (readonly string[])[] = [
  // The programs' mains: the server's, and `corral`'s (a client of the REST API and WebSocket, which
  // also starts the server, a runner, and installs the server as a service);
  // and docs/settings.md's table, read from every program's settings.
  ["server.ts", "cli", "settings-doc.ts"],
  // Opens the registry, builds the app and listens.
  ["start.ts"],
  // Registers plugins, routes and the doors in an explicit order.
  ["app.ts"],
  // The three doors, thin over the services; `corral runner` (the job engine fed by claims) and the
  // server's ear for what runners store; the panel's dev server.
  ["routes", "mcp", "ws", "runner", "dev-web.ts"],
  // The composition root: builds every service the doors call.
  ["services.ts"],
  // Services over the job engine; the review of worktree jobs' changes.
  ["conversations", "workdirs", "observability", "review"],
  // The job engine.
  ["jobs"],
  // Services over the registry: agents and their kinds, prices and budgets, who did what, sessions,
  // the config file, the directory of runners; git worktrees (git on repositories workers write).
  ["agents", "costs", "audit", "security", "config-file", "fleet", "worktrees"],
  // The registry (SQLite and PostgreSQL).
  ["db"],
  // The settings: the only reader of process.env.
  ["config.ts"],
  // Neutral helpers.
  ["lib"],
];

// Type-only imports count: they vanish at run time, but the two modules still change together, and
// a cycle of types is one `import type` away from a cycle that runs.
const graph = importGraph(readSources(SRC));

describe("the detector", () => {
  test("reads static, type-only, re-exported, side-effect and dynamic imports, not comments or strings", () => {
    const text = [
      'import { a } from "../jobs/a.js";',
      'import type { B } from "../jobs/b.js";',
      'import { type C } from "../jobs/c.js";',
      'export * from "../lib/d.js";',
      'export type { E } from "../lib/e.js";',
      'import "../lib/f.js";',
      "const g = await import('../ws/g.js');",
      '// import { h } from "../ws/h.js";',
      "const i = 'import { i } from \"../ws/i.js\"';",
    ].join("\n");
    expect(importSpecifiers(text)).toEqual([
      "../jobs/a.js",
      "../jobs/b.js",
      "../jobs/c.js",
      "../lib/d.js",
      "../lib/e.js",
      "../lib/f.js",
      "../ws/g.js",
    ]);
  });

  test("resolves the .js and .ts spellings of a root file, a folder's index and a bare path to one file", () => {
    const files = new Set(["services.ts", "runner/hear.ts", "ws/index.ts", "jobs/spawner.mjs"]);
    expect(resolveImport("runner/hear.ts", "../services.js", files)).toBe("services.ts");
    expect(resolveImport("runner/hear.ts", "../services.ts", files)).toBe("services.ts");
    expect(resolveImport("runner/hear.ts", "../services", files)).toBe("services.ts");
    expect(resolveImport("services.ts", "./ws/index.js", files)).toBe("ws/index.ts");
    expect(resolveImport("services.ts", "./ws", files)).toBe("ws/index.ts");
    expect(resolveImport("services.ts", "./jobs/spawner.mjs", files)).toBe("jobs/spawner.mjs");
    expect(resolveImport("services.ts", "zod", files)).toBeNull();
    expect(() => importGraph(new Map([["services.ts", 'import { x } from "./gone.js";']]))).toThrow(/services.ts imports \.\/gone\.js/);
  });

  // A cycle through a root file (spelled `.js` one way, `.ts` the other), a cycle inside a folder
  // with a second, longer cycle sharing one of its imports, and a file importing itself; the rest
  // of the graph imports one way and must not be named.
  const synthetic = importGraph(
    new Map([
      ["services.ts", 'import { RunnerDirectory } from "./runner/directory.js";\nimport { x } from "./lib/x.js";'],
      ["runner/directory.ts", 'import type { Services } from "../services.ts";'],
      ["runner/main.ts", 'import { Runner } from "./directory.js";'],
      ["agents/a.ts", 'import { b } from "./b.js";'],
      ["agents/b.ts", 'import { c } from "./c.js";\nimport { d } from "./d.js";'],
      ["agents/c.ts", 'import type { A } from "./a.js";'],
      ["agents/d.ts", 'import { b } from "./b.js";\nimport { x } from "../lib/x.js";'],
      ["lib/x.ts", "export const x = 1;"],
      ["lib/self.ts", 'export const s = 1;\nexport * from "./self.js";'],
    ]),
  );

  test("names each cycle's files in import order, through a root file and inside a folder", () => {
    expect(importCycles(synthetic).map(cycleText)).toEqual([
      "agents/a.ts → agents/b.ts → agents/c.ts → agents/a.ts",
      "agents/b.ts → agents/d.ts → agents/b.ts",
      "lib/self.ts → lib/self.ts",
      "runner/directory.ts → services.ts → runner/directory.ts",
    ]);
  });

  test("names a cycle between layers by the imports that make it", () => {
    expect(layerCycles(synthetic)).toEqual(["runner (runner/directory.ts → services.ts) → services.ts (services.ts → runner/directory.ts) → runner"]);
  });

  test("names every import up a floor, and every layer no floor holds", () => {
    const floors = [["runner"], ["services.ts"], ["agents"], ["lib"]];
    expect(upwardImports(synthetic, floors)).toEqual(["services.ts → runner/directory.ts (up from [services.ts] to [runner])"]);
    expect(unplacedLayers(synthetic, [["runner"], ["lib"]])).toEqual(["agents", "services.ts"]);
  });

  test("finds nothing in a graph that imports one way", () => {
    const oneWay = importGraph(
      new Map([
        ["app.ts", 'import { s } from "./services.js";'],
        ["services.ts", 'import { x } from "./lib/x.js";'],
        ["lib/x.ts", ""],
      ]),
    );
    expect(importCycles(oneWay)).toEqual([]);
    expect(layerCycles(oneWay)).toEqual([]);
    expect(upwardImports(oneWay, [["app.ts"], ["services.ts"], ["lib"]])).toEqual([]);
  });
});

describe("the server's imports", () => {
  test("the graph is the whole server: every folder and root file, hundreds of files", () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get("app.ts")).toContain("services.ts");
    expect(graph.get("routes/runners.ts")).toContain("services.ts");
  });

  test("every top-level folder and root file is on a floor, and every floor's layer exists", () => {
    expect(unplacedLayers(graph, FLOORS)).toEqual([]);
    const layers = new Set([...graph.keys()].map(layerOf));
    expect(FLOORS.flat().filter((layer) => !layers.has(layer))).toEqual([]);
  });

  test("no file imports one on a floor above its own", () => {
    expect(upwardImports(graph, FLOORS)).toEqual([]);
  });

  test("no cycle between layers on one floor", () => {
    expect(layerCycles(graph)).toEqual([]);
  });

  test("no import cycle between files, inside a folder or across folders", () => {
    expect(importCycles(graph).map(cycleText)).toEqual([]);
  });

  test("agents never import the job engine, which runs them", () => {
    expect(layerGraph(graph).get("agents")?.get("jobs") ?? []).toEqual([]);
  });

  test("the WebSocket reads output and job files only through the services", () => {
    const wsRuntime = [...graph.keys()]
      .filter((file) => file.startsWith("ws/"))
      .flatMap((file) =>
        [...readFileSync(path.join(SRC, file), "utf8").matchAll(/^import (?!type )[^;]*?from\s*["'](\.\.\/(?:jobs|db)\/[^"']+)["']/gm)].map(
          (m) => m[1],
        ),
      );
    expect(wsRuntime).toEqual([]);
  });

  test("the doors hold no workdir policy: routes, MCP and the WebSocket never resolve paths themselves", () => {
    const doors = [...graph.keys()].filter((file) => /^(routes|mcp|ws)\//.test(file));
    const resolving = doors.filter((file) => /\b(isInside|realpath(Sync)?|expandHome)\b/.test(readFileSync(path.join(SRC, file), "utf8")));
    expect(resolving).toEqual([]);
  });
});
