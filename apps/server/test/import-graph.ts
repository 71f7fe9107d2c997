// The server's import graph, file by file, and what the layering test asks of it: no cycle, and
// no arrow from a floor to one above it. Imports are read by TypeScript's own scanner (comments
// and strings are not imports; `import type`, re-exports, side-effect and dynamic imports are)
// and resolved to the file they name, so `./services.js` and `./services.ts` are one node.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/** Each source file (a path under src/, `/`-separated) with the files it imports. */
export type ImportGraph = Map<string, Set<string>>;

/** Every source file under `dir` that the server runs (tests left out: they may import anything), by its path under `dir`. */
export function readSources(dir: string): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(tsx?|mts|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) sources.set(rel, readFileSync(path.join(dir, rel), "utf8"));
    }
  };
  walk("");
  return sources;
}

/** What a module imports, as written: static, type-only, re-exported, side-effect and dynamic imports. */
export function importSpecifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The spellings a specifier may have for one source file: ESM imports name `.ts` files `.js`. */
const SPELLINGS: Record<string, string[]> = { ".js": [".ts", ".tsx", ".js"], ".jsx": [".tsx", ".jsx"], ".mjs": [".mts", ".mjs"] };

/** The file among `files` that relative `specifier`, written in `from`, names; null for a package or a file that is not there. */
export function resolveImport(from: string, specifier: string, files: ReadonlySet<string>): string | null {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return null;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const ext = path.posix.extname(target);
  const stem = target.slice(0, target.length - ext.length);
  const candidates = ext in SPELLINGS ? (SPELLINGS[ext] ?? []).map((e) => stem + e) : [target, `${target}.ts`, `${target}.tsx`, `${target}/index.ts`];
  return candidates.find((c) => files.has(c)) ?? null;
}

/** Whether relative `specifier`, written in `from`, leaves src/ (the registry contract's helpers reach test/). */
const leavesSrc = (from: string, specifier: string) => path.posix.join(path.posix.dirname(from), specifier).startsWith("../");

/**
 * The graph of `sources` (path under src/ → text). A relative import inside src/ that names no
 * source file throws: an import the graph cannot place would be one whose cycles go unseen.
 */
export function importGraph(sources: ReadonlyMap<string, string>): ImportGraph {
  const files = new Set(sources.keys());
  const graph: ImportGraph = new Map();
  for (const [file, text] of sources) {
    const targets = new Set<string>();
    for (const specifier of importSpecifiers(text)) {
      if (!specifier.startsWith(".") || leavesSrc(file, specifier)) continue;
      const target = resolveImport(file, specifier, files);
      if (!target)
        throw new Error(`${file} imports ${specifier}, which is no source file under src/: fix the import, or teach resolveImport its spelling`);
      targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of `graph` (Tarjan's algorithm): its nodes grouped by which can reach each other. */
function components(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    found.push(component);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The shortest path from `from` to `to` through `within` only (breadth first), both ends included; null if none. */
function shortestPath(graph: ReadonlyMap<string, ReadonlySet<string>>, from: string, to: string, within: ReadonlySet<string>): string[] | null {
  const cameFrom = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    if (node === to) {
      const trail: string[] = [];
      for (let at: string | null | undefined = to; at; at = cameFrom.get(at)) trail.unshift(at);
      return trail;
    }
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (within.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return null;
}

/**
 * Every import cycle of `graph`, each as its nodes in import order, the first repeated at the
 * end. Every import that lies on a cycle is in at least one of them (the shortest cycle through
 * it); a cycle found through several of its imports is listed once, starting at its least node.
 * The graph has a cycle exactly when this list is not empty.
 */
export function importCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const cycles = new Map<string, string[]>();
  for (const component of components(graph)) {
    const within = new Set(component);
    for (const from of component) {
      for (const to of graph.get(from) ?? []) {
        if (!within.has(to)) continue;
        const back = shortestPath(graph, to, from, within);
        if (!back) continue;
        const loop = to === from ? [from] : [from, ...back.slice(0, -1)];
        const start = loop.indexOf([...loop].sort()[0] ?? from);
        const cycle = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.set(cycle.join("\n"), [...cycle, cycle[0] ?? from]);
      }
    }
  }
  return [...cycles.values()].sort((a, b) => a.join("\n").localeCompare(b.join("\n")));
}

/** A cycle as the test names it: `a.ts → b.ts → a.ts`. */
export const cycleText = (cycle: readonly string[]) => cycle.join(" → ");

/** The layer a file belongs to: its top-level folder under src/, or the root file itself (`services.ts`). */
export const layerOf = (file: string) => file.split("/")[0] ?? file;

/** Which layer imports which, with every file-to-file import behind each arrow. */
export function layerGraph(graph: ImportGraph): Map<string, Map<string, string[]>> {
  const layers = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph) {
    const from = layerOf(file);
    const arrows = layers.get(from) ?? new Map<string, string[]>();
    layers.set(from, arrows);
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== from) arrows.set(to, [...(arrows.get(to) ?? []), `${file} → ${target}`]);
    }
  }
  return layers;
}

/** Each cycle between layers, with the first import that makes each of its arrows: `a (a/x.ts → b/y.ts) → b (…) → a`. */
export function layerCycles(graph: ImportGraph): string[] {
  const layers = layerGraph(graph);
  const arrows = new Map([...layers].map(([layer, to]) => [layer, new Set(to.keys())]));
  return importCycles(arrows).map((cycle) =>
    cycle
      .map((layer, i) => {
        const next = cycle[i + 1];
        return next === undefined ? layer : `${layer} (${layers.get(layer)?.get(next)?.[0]})`;
      })
      .join(" → "),
  );
}

/** Layers `graph` has that no floor holds: each layer must be placed before its arrows can be judged. */
export function unplacedLayers(graph: ImportGraph, floors: readonly (readonly string[])[]): string[] {
  const placed = new Set(floors.flat());
  return [...new Set([...graph.keys()].map(layerOf))].filter((layer) => !placed.has(layer)).sort();
}

/** Every import from a file to one on a floor above its own (floors listed top first), named with both floors. */
export function upwardImports(graph: ImportGraph, floors: readonly (readonly string[])[]): string[] {
  const floorOf = (file: string) => floors.findIndex((floor) => floor.includes(layerOf(file)));
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = floorOf(file);
      const to = floorOf(target);
      if (from >= 0 && to >= 0 && to < from)
        upward.push(`${file} → ${target} (up from [${floors[from]?.join(", ")}] to [${floors[to]?.join(", ")}])`);
    }
  }
  return upward.sort();
}
