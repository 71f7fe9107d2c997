import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(src, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** The folders (under src/) each source file's relative imports land in. */
function importedFolders(file: string): string[] {
  const text = readFileSync(join(src, file), "utf8");
  return [...text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)].map(
    (m) => relative(src, resolve(dirname(join(src, file)), m[1] ?? "")).split("/")[0] ?? "",
  );
}

describe("the panel's imports run pages → hooks → lib", () => {
  it("lib/ imports nothing from hooks, components, pages or the router", () => {
    const back = sources("lib").flatMap((f) =>
      importedFolders(f)
        .filter((to) => ["hooks", "components", "pages", "router.js"].includes(to))
        .map((to) => `${f} → ${to}`),
    );
    expect(back).toEqual([]);
  });

  it("hooks/ import no pages or components", () => {
    const back = sources("hooks").flatMap((f) =>
      importedFolders(f)
        .filter((to) => to === "pages" || to === "components")
        .map((to) => `${f} → ${to}`),
    );
    expect(back).toEqual([]);
  });

  it("queries and mutations are declared in hooks/ only", () => {
    const outside = [...sources("api"), ...sources("pages"), ...sources("components"), ...sources("lib")].filter((f) =>
      /\buse(Query|Mutation|InfiniteQuery)\b/.test(readFileSync(join(src, f), "utf8")),
    );
    expect(outside).toEqual([]);
  });
});
