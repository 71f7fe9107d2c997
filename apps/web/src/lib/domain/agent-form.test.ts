import { describe, expect, it } from "vitest";
import { createCommandBody, newCommandAgentForm } from "./agent-form.js";
import { ApiRequestError } from "../../api/client.js";

describe("forms", () => {
  it("builds a command agent from the form", () => {
    const form = { ...newCommandAgentForm(), name: "echoer", command: "echo", args: "{prompt}\n--flag", env: "A=1" };
    expect(createCommandBody(form)).toEqual({
      body: { name: "echoer", kind: "command", command: "echo", args: ["{prompt}", "--flag"], env: { A: "1" }, description: "" },
    });
    expect(createCommandBody({ ...form, env: "nope" })).toMatchObject({ field: "env" });
  });

  it("finds the server's message for a field", () => {
    const err = new ApiRequestError("invalid input", 400, "workdir", [{ field: "workdir", message: "outside the roots" }]);
    expect(err.messageFor("workdir")).toBe("outside the roots");
    expect(err.messageFor("prompt")).toBeUndefined();
  });
});
