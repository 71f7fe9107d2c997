// The rule that picks `pnpm test:pg`'s files (pg-run.ts) leaves out no file that uses a server's
// registry: its entry points are every helper that hands one out, and a file listed to run once
// reads no stored state.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, test } from "vitest";
import { leftOutOfPgRun, ONCE, REGISTRY_ENTRY_POINTS, usesRegistry } from "./pg-run.js";

const dir = path.dirname(fileURLToPath(import.meta.url));
const read = (name: string) => readFileSync(path.join(dir, name), "utf8");
const helpers = readdirSync(dir).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));

describe("pnpm test:pg's files", () => {
  test("every helper that reaches registryEnv, directly or through another, is an entry point", () => {
    // Exported functions of the test folder's helper modules, with the text of their bodies.
    const functions = helpers.flatMap((name) => {
      const source = ts.createSourceFile(name, read(name), ts.ScriptTarget.Latest, true);
      return source.statements.flatMap((node) =>
        ts.isFunctionDeclaration(node) && node.name && node.body && node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
          ? [{ name: node.name.text, body: node.body.getText(source) }]
          : [],
      );
    });
    const reaching = new Set(["registryEnv"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const fn of functions) {
        if (reaching.has(fn.name) || ![...reaching].some((name) => new RegExp(`\\b${name}\\(`).test(fn.body))) continue;
        reaching.add(fn.name);
        grew = true;
      }
    }
    expect([...reaching].sort()).toEqual([...REGISTRY_ENTRY_POINTS].sort());
  });

  test("a file listed to run once starts a server, and neither reads stored state nor asks which registry the run is for", () => {
    for (const [name, why] of Object.entries(ONCE)) {
      const text = read(name);
      expect(why.length, name).toBeGreaterThan(0);
      expect(usesRegistry(text), `${name} starts no server: it is left out without being listed`).toBe(true);
      expect(text, name).not.toMatch(/from "\.\/(registry-of|test-registry|postgres)\.js"/);
    }
  });

  test("the run leaves out what the rule says, and keeps the files that read a stopped server's registry", () => {
    const leftOut = leftOutOfPgRun(dir).map((file) => path.basename(file));
    for (const name of Object.keys(ONCE)) expect(leftOut).toContain(name);
    for (const name of ["recovery.test.ts", "crash.test.ts", "sessions.test.ts", "registry.test.ts"]) expect(leftOut).not.toContain(name);
    // A file that only starts servers of its own on PostgreSQL runs once, as does one without a server.
    expect(leftOut).toContain("runners-many.test.ts");
    expect(leftOut).toContain("layering.test.ts");
  });
});
