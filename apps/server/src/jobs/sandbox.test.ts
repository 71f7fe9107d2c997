import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { bwrapArgs } from "./sandbox.js";

test("secrets and Corral's data are hidden after the workdir is bound, so a workdir that contains them (home itself) cannot uncover them", () => {
  const home = tempDir("corral-bwrap-args-");
  try {
    const dataDir = path.join(home, ".local", "share", "corral");
    mkdirSync(path.join(home, ".ssh"));
    mkdirSync(dataDir, { recursive: true });
    const args = bwrapArgs("gemini", home, home, dataDir);
    // Mounts apply in order: a later bind of a parent would cover an earlier tmpfs over its child.
    const workdirBind = args.findIndex((arg, i) => arg === "--bind" && args[i + 1] === home && args[i + 2] === home);
    expect(workdirBind).toBeGreaterThan(0);
    for (const hidden of [path.join(home, ".ssh"), dataDir]) {
      const tmpfs = args.findIndex((arg, i) => arg === "--tmpfs" && args[i + 1] === hidden);
      expect(tmpfs, hidden).toBeGreaterThan(workdirBind);
    }
    expect(args.slice(-2)).toEqual(["--chdir", home]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
