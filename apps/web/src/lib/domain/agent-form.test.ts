import { describe, expect, it } from "vitest";
import { createCommandBody, newCommandAgentForm, updateBody } from "./agent-form.js";
import { ApiRequestError } from "../../api/client.js";

describe("forms", () => {
  it("builds a command agent from the form", () => {
    const form = { ...newCommandAgentForm(), name: "echoer", command: "echo", args: "{prompt}\n--flag", env: "A=1" };
    expect(createCommandBody(form)).toEqual({
      body: { name: "echoer", kind: "command", command: "echo", args: ["{prompt}", "--flag"], env: { A: "1" }, description: "" },
    });
    expect(createCommandBody({ ...form, env: "nope" })).toMatchObject({ field: "env" });
  });

  it("edits an OpenCode server agent's address, not a binary", () => {
    const form = { ...newCommandAgentForm(), baseUrl: " http://127.0.0.1:4096 ", command: "ignored" };
    const update = updateBody(form, "opencode_server");
    expect(update).toMatchObject({ body: { baseUrl: "http://127.0.0.1:4096" } });
    expect(update).not.toHaveProperty("body.command");
  });

  it("finds the server's message for a field", () => {
    const err = new ApiRequestError("invalid input", 400, "workdir", [{ field: "workdir", message: "outside the roots" }]);
    expect(err.messageFor("workdir")).toBe("outside the roots");
    expect(err.messageFor("prompt")).toBeUndefined();
  });
});
