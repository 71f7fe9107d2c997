import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";
import { agentKindNames } from "../src/agents/kind-lookup.js";
import { installRoot } from "../src/lib/install-root.js";

/**
 * The panel knows no agent kind by name: what a kind's form asks and what its agents can do, it
 * reads from `GET /api/agent-kinds`, so adding a kind is its module and its registry line. This
 * reads every source file of the panel (tests aside) with TypeScript's parser and fails on any
 * kind of the server's registry written as a string (`kind === "ollama"`, `case "api":`, JSX
 * text) or as an object's key (`{ command: … }`).
 */

const webSrc = path.join(installRoot, "apps/web/src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return sources(file);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [file] : [];
  });
}

interface Mention {
  file: string;
  line: number;
  name: string;
}

/** Where the source names one of `kinds`: strings, template parts, JSX text, and object keys. */
function kindMentions(file: string, text: string, kinds: readonly string[]): Mention[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Mention[] = [];
  const check = (node: ts.Node, value: string) => {
    if (kinds.includes(value)) found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, name: value });
  };
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) check(node, node.text);
    else if (ts.isJsxText(node)) check(node, node.text.trim());
    else if (
      (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node) || ts.isMethodDeclaration(node)) &&
      ts.isObjectLiteralExpression(node.parent) &&
      ts.isIdentifier(node.name)
    )
      check(node.name, node.name.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Words the panel uses that are also a kind's name but mean something else, each counted: one
 * more of them in that file (a kind check slipped in beside them) fails as well.
 */
const OTHER_MEANINGS: { file: string; name: string; count: number; why: string }[] = [
  { file: "lib/domain/provider-colours.ts", name: "ollama", count: 1, why: "a provider of the price table, given a fixed chart colour" },
  { file: "lib/domain/provider-colours.ts", name: "opencode", count: 1, why: "a provider of the price table, given a fixed chart colour" },
  { file: "lib/transport/query-keys.ts", name: "ollama", count: 2, why: "the cache keys of the /api/ollama routes" },
  { file: "lib/domain/job-command.ts", name: "command", count: 2, why: "how a job's worker was started: a command line" },
  { file: "pages/job-detail-page.tsx", name: "command", count: 1, why: "how a job's worker was started: a command line" },
];

describe("the panel names no agent kind", () => {
  test("the check finds a kind however it is written", () => {
    const snippet = [
      'if (agent.kind === "ollama") show();',
      "switch (kind) { case 'api': break; }",
      "const label = `gemini`;",
      "const forms = { command: 1, opencode_server() {} };",
      "const el = <b>claude</b>;",
      'const fine = "the command line";',
    ].join("\n");
    expect(kindMentions("snippet.tsx", snippet, agentKindNames()).map((m) => `${m.line}:${m.name}`)).toEqual([
      "1:ollama",
      "2:api",
      "3:gemini",
      "4:command",
      "4:opencode_server",
      "5:claude",
    ]);
  });

  test("no source file of the panel names one", () => {
    const kinds = agentKindNames();
    expect(kinds.length).toBeGreaterThan(5);
    const mentions = sources(webSrc).flatMap((file) => kindMentions(path.relative(webSrc, file), readFileSync(file, "utf8"), kinds));
    const unexplained = mentions.filter((m) => !OTHER_MEANINGS.some((o) => o.file === m.file && o.name === m.name));
    expect(unexplained.map((m) => `${m.file}:${m.line} names the ${m.name} kind`)).toEqual([]);
    // Each other meaning is still there, as often as it was: one that is gone comes off the list.
    const counted = OTHER_MEANINGS.map((o) => ({ ...o, count: mentions.filter((m) => m.file === o.file && m.name === o.name).length }));
    expect(counted).toEqual(OTHER_MEANINGS);
  });
});
