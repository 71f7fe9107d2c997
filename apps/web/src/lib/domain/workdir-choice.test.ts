import { describe, expect, it } from "vitest";
import { type KnownWorkdir, matchWorkdirs, openingWorkdir } from "./workdir-choice.js";

const wd = (path: string, more: Partial<KnownWorkdir> = {}): KnownWorkdir => ({ path, agents: [], jobs: 0, lastJobAt: null, ...more });

// The alphabetically first is never the newest: the page must not open on it.
const many = [
  wd("/srv/aaa-old", { jobs: 3, lastJobAt: 1_000 }),
  wd("/srv/api", { agents: ["gemini"], jobs: 9, lastJobAt: 5_000 }),
  wd("/srv/api/tests", { jobs: 1, lastJobAt: 2_000, runner: "gpu-box" }),
  wd("/srv/docs", { agents: ["claude", "gemini"] }),
];

describe("the workdir the Files page opens on", () => {
  it("is the one the URL names, even one no longer listed", () => {
    expect(openingWorkdir(many, { workdir: "/srv/docs", path: null })).toBe("/srv/docs");
    expect(openingWorkdir(many, { workdir: "/gone", path: null })).toBe("/gone");
  });

  it("else the deepest one holding the file the URL names", () => {
    expect(openingWorkdir(many, { workdir: null, path: "/srv/api/tests/a.txt" })).toBe("/srv/api/tests");
    expect(openingWorkdir(many, { workdir: null, path: "/srv/api/src/x.ts" })).toBe("/srv/api");
    // A sibling that shares the name's start is not inside it.
    expect(openingWorkdir(many, { workdir: null, path: "/srv/api-v2/x" })).toBe("/srv/api");
  });

  it("else the one a job used last, not the alphabetically first", () => {
    expect(openingWorkdir(many, { workdir: null, path: null })).toBe("/srv/api");
  });

  it("else the only one; with several and no job anywhere, none: the page asks", () => {
    expect(openingWorkdir([wd("/srv/docs")], { workdir: null, path: null })).toBe("/srv/docs");
    expect(openingWorkdir([wd("/a"), wd("/b")], { workdir: null, path: null })).toBeNull();
    expect(openingWorkdir([], { workdir: null, path: null })).toBeNull();
  });
});

describe("finding a workdir by typing", () => {
  const paths = (typed: string) => matchWorkdirs(many, typed).map((w) => w.path);

  it("lists all, the most recently used first and those without jobs last, before anything is typed", () => {
    expect(paths("")).toEqual(["/srv/api", "/srv/api/tests", "/srv/aaa-old", "/srv/docs"]);
    expect(paths("   ")).toEqual(paths(""));
  });

  it("keeps those holding every word, in the path, an agent's or the runner's name, whatever the case", () => {
    expect(paths("API tests")).toEqual(["/srv/api/tests"]);
    expect(paths("gemini")).toEqual(["/srv/api", "/srv/docs"]);
    expect(paths("gpu")).toEqual(["/srv/api/tests"]);
    expect(paths("claude docs")).toEqual(["/srv/docs"]);
    expect(paths("nowhere")).toEqual([]);
  });

  it("reads what is typed as text, never as a pattern", () => {
    expect(paths(".*")).toEqual([]);
    expect(paths("(")).toEqual([]);
  });
});
