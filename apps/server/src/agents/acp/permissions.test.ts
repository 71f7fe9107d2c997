import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { decidePermission } from "./permissions.js";

const root = mkdtempSync(path.join(tmpdir(), "corral-acp-perm-"));
const workdir = path.join(root, "work");
mkdirSync(path.join(workdir, "src"), { recursive: true });
symlinkSync(tmpdir(), path.join(workdir, "out"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const options = [
  { optionId: "yes", kind: "allow_once" },
  { optionId: "always", kind: "allow_always" },
  { optionId: "no", kind: "reject_once" },
];
const ask = (kind: string | null, ...paths: string[]) => ({ kind, title: "t", locations: paths.map((p) => ({ path: p })) });

describe("an ACP permission request under the agent's policy", () => {
  test("workdir: file tools on files inside are allowed (new files too), with the allow-once option", () => {
    for (const kind of ["read", "edit", "delete", "move", "search"]) {
      expect(decidePermission("workdir", workdir, ask(kind, path.join(workdir, "src/new.ts")), options)).toMatchObject({
        allowed: true,
        optionId: "yes",
      });
    }
    expect(decidePermission("workdir", workdir, ask("think"), options)).toMatchObject({ allowed: true });
  });

  test("workdir: a file outside, through .., through a symlink out, relative or with a NUL is denied, naming it", () => {
    for (const p of [path.join(root, "elsewhere"), path.join(workdir, "../x"), path.join(workdir, "out/x"), "src/a.ts", `${workdir}/a\0b`]) {
      const decision = decidePermission("workdir", workdir, ask("edit", path.join(workdir, "ok"), p), options);
      expect(decision, p).toMatchObject({ allowed: false, optionId: "no" });
      expect(decision.reason).toContain("outside the workdir");
    }
  });

  test("workdir: commands, fetches, unknown kinds and file tools naming no file are denied", () => {
    for (const kind of ["execute", "fetch", "other", null, "switch_mode"]) {
      expect(decidePermission("workdir", workdir, ask(kind, path.join(workdir, "a")), options), String(kind)).toMatchObject({ allowed: false });
    }
    expect(decidePermission("workdir", workdir, ask("edit"), options).reason).toContain("names no file");
  });

  test("allow and deny answer everything so; with no option of that sense the request is cancelled (null)", () => {
    expect(decidePermission("allow", workdir, ask("execute"), options)).toMatchObject({ allowed: true, optionId: "yes" });
    expect(decidePermission("deny", workdir, ask("read", path.join(workdir, "a")), options)).toMatchObject({ allowed: false, optionId: "no" });
    // Allowing always would stop the agent asking for the rest of the session: cancelled instead.
    expect(decidePermission("allow", workdir, ask("execute"), [{ optionId: "always", kind: "allow_always" }])).toMatchObject({
      allowed: false,
      optionId: null,
    });
    expect(
      decidePermission("workdir", workdir, ask("edit", path.join(workdir, "a")), [{ optionId: "always", kind: "allow_always" }, ...options.slice(2)])
        .optionId,
    ).toBeNull();
    expect(decidePermission("deny", workdir, ask("execute"), [{ optionId: "yes", kind: "allow_once" }]).optionId).toBeNull();
  });
});
