import { describe, expect, it } from "vitest";
import { failureLine } from "./job-failure.js";

describe("failureLine", () => {
  it("says why without the exit code line, on one line", () => {
    expect(failureLine("exit code 1\nError: quota exceeded\n\nretry later", 1)).toBe("Error: quota exceeded | retry later");
    expect(failureLine("the job was not started: the disk is full", null)).toBe("the job was not started: the disk is full");
  });

  it("keeps a first line that is not this exit code's, and has nothing to say of an exit code alone", () => {
    expect(failureLine("exit code 2\nboom", 1)).toBe("exit code 2 | boom");
    expect(failureLine("exit code 1", 1)).toBeUndefined();
    expect(failureLine(null, null)).toBeUndefined();
  });
});
