// The documentation stays true to the code and to itself: the settings table is the one the
// schemas write, every CORRAL_* variable the server reads is in it, and every relative link in
// README.md, CONTRIBUTING.md and docs/*.md reaches a file and, with #anchor, a heading there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { BinOverrideSetting } from "../src/config.js";
import { settingRows, withSettingsTable } from "../src/settings-doc.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SERVER_SRC = path.join(ROOT, "apps/server/src");
const SETTINGS_DOC = path.join(ROOT, "docs/settings.md");

describe("docs/settings.md", () => {
  test("holds the table the settings schemas write", () => {
    const doc = readFileSync(SETTINGS_DOC, "utf8");
    expect(doc, "docs/settings.md is out of date with the settings schemas: run `pnpm docs:settings`").toBe(withSettingsTable(doc));
  });

  test("lists every CORRAL_* variable the server's code reads", () => {
    const documented = new Set(settingRows().map((row) => row.variable));
    const missing = new Map<string, string>();
    for (const file of sourceFiles(SERVER_SRC)) {
      const text = readFileSync(file, "utf8");
      // A code constant named CORRAL_… (a prefix, say) is no variable anyone sets.
      const constants = new Set([...text.matchAll(/\b(?:const|let|var)\s+(CORRAL_[A-Z0-9_]+)\b/g)].map((m) => m[1]));
      for (const [name] of text.matchAll(/CORRAL_[A-Z0-9_]+/g)) {
        if (documented.has(name) || constants.has(name) || BinOverrideSetting.pattern.test(name)) continue;
        if (!missing.has(name)) missing.set(name, path.relative(ROOT, file));
      }
    }
    const listed = [...missing].map(([name, file]) => `${name} (read in ${file})`);
    expect(
      listed,
      "give each a .describe()d entry in a settings schema (config.ts, or the runner's or the command's), then run `pnpm docs:settings`",
    ).toEqual([]);
  });
});

describe("links in the documentation", () => {
  const docs = ["README.md", "CONTRIBUTING.md", ...readdirSync(path.join(ROOT, "docs")).map((name) => `docs/${name}`)].filter((f) =>
    f.endsWith(".md"),
  );

  test.each(docs)("%s: every relative link resolves, #anchors included", (doc) => {
    const broken: string[] = [];
    for (const { target, line } of relativeLinks(readFileSync(path.join(ROOT, doc), "utf8"))) {
      const [file = "", anchor] = target.split("#", 2);
      const resolved = file ? path.resolve(path.dirname(path.join(ROOT, doc)), decodeURIComponent(file)) : path.join(ROOT, doc);
      if (!existsSync(resolved)) {
        broken.push(`line ${line}: ${target} (no file ${path.relative(ROOT, resolved)})`);
      } else if (
        anchor !== undefined &&
        !(resolved.endsWith(".md") && statSync(resolved).isFile() && anchorsOf(readFileSync(resolved, "utf8")).has(anchor))
      ) {
        broken.push(`line ${line}: ${target} (no heading #${anchor} in ${path.relative(ROOT, resolved)})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("the anchors are GitHub's", () => {
    const anchors = anchorsOf("# Corral\n## Set up and run\n### Sandbox (bubblewrap)\n## `corral_run_many`: one prompt\n## Jobs\n## Jobs\n");
    expect([...anchors]).toEqual(["corral", "set-up-and-run", "sandbox-bubblewrap", "corral_run_many-one-prompt", "jobs", "jobs-1"]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mjs|sql)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** The lines of a markdown text outside fenced code blocks, with their numbers. */
function proseLines(text: string): { text: string; line: number }[] {
  let fenced = false;
  return text.split("\n").flatMap((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ text: line, line: i + 1 }];
  });
}

/** Links to files of this repository: not URLs with a scheme, not inside inline code. */
function relativeLinks(text: string): { target: string; line: number }[] {
  return proseLines(text).flatMap(({ text: line, line: number }) =>
    [...line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1] ?? "")
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ target, line: number })),
  );
}

/** The anchors GitHub gives a document's headings: text lowercased, punctuation dropped, spaces as dashes, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/[`*]/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    anchors.add(count ? `${slug}-${count}` : slug);
    seen.set(slug, count + 1);
  }
  return anchors;
}
