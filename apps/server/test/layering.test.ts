import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src");

/** Every import specifier in a module: static (type-only included), re-exports and dynamic. */
const IMPORT = /(?:^|[\s;}])(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** The layer a file belongs to: its top-level folder under src/, or the root file itself. */
const layerOf = (file: string) => path.relative(SRC, file).split(path.sep)[0] ?? "";

/** Which layer imports which, with one file that shows each arrow. */
function layerGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? "";
      if (!specifier.startsWith(".")) continue;
      const to = layerOf(path.resolve(path.dirname(file), specifier));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, path.relative(SRC, file));
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Each cycle found by a depth-first walk, written as `a → b (file) → a (file)`. */
function cycles(graph: Map<string, Map<string, string>>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const walk = (node: string, trail: { layer: string; via: string }[]) => {
    const at = trail.findIndex((step) => step.layer === node);
    if (at >= 0) {
      found.push(
        trail
          .slice(at)
          .map((step) => `${step.layer} (${step.via})`)
          .join(" → ") + ` → ${node}`,
      );
      return;
    }
    if (done.has(node)) return;
    for (const [next, via] of graph.get(node) ?? []) walk(next, [...trail, { layer: node, via }]);
    done.add(node);
  };
  for (const node of graph.keys()) walk(node, []);
  return found;
}

test("the import regex sees static, type-only, re-exported and dynamic imports", () => {
  const text = [
    'import { a } from "../jobs/a.js";',
    'import type { B } from "../jobs/b.js";',
    'export * from "../lib/c.js";',
    "const d = await import('../ws/d.js');",
  ].join("\n");
  expect([...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2])).toEqual(["../jobs/a.js", "../jobs/b.js", "../lib/c.js", "../ws/d.js"]);
});

test("a cycle between layers is found and named", () => {
  const graph = new Map([
    ["agents", new Map([["jobs", "agents/x.ts"]])],
    ["jobs", new Map([["agents", "jobs/y.ts"]])],
  ]);
  expect(cycles(graph)).toEqual(["agents (agents/x.ts) → jobs (jobs/y.ts) → agents"]);
});

// Doors (routes, mcp, ws) call services (jobs, agents, workdirs…), which use repos (db) and lib;
// an arrow back up, or between two services both ways, is a cycle this test names.
test("the server's top-level folders import one way: no cycle between them", () => {
  const graph = layerGraph();
  expect(graph.get("routes")?.size).toBeGreaterThan(0);
  expect(cycles(graph)).toEqual([]);
});

test("agents never import the job engine, which runs them", () => {
  expect(layerGraph().get("agents")?.get("jobs") ?? null).toBeNull();
});

test("the WebSocket reads output and job files only through the services", () => {
  const wsRuntime = sourceFiles(path.join(SRC, "ws")).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/^import (?!type )[^;]*?from\s*["'](\.\.\/(?:jobs|db)\/[^"']+)["']/gm)].map((m) => m[1]),
  );
  expect(wsRuntime).toEqual([]);
});

test("the doors hold no workdir policy: routes, MCP and the WebSocket never resolve paths themselves", () => {
  const doors = ["routes", "mcp", "ws"].flatMap((door) => sourceFiles(path.join(SRC, door)));
  const resolving = doors.filter((file) => /\b(isInside|realpath(Sync)?|expandHome)\b/.test(readFileSync(file, "utf8")));
  expect(resolving.map((file) => path.relative(SRC, file))).toEqual([]);
});
