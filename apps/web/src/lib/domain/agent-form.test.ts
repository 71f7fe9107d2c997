import { describe, expect, it } from "vitest";
import { launchBody } from "./launch-form.js";
import { createCommandBody, newCommandAgentForm } from "./agent-form.js";
import { ApiRequestError } from "../../api/client.js";

describe("forms", () => {
  it("builds a launch body and refuses a bad timeout at its field", () => {
    expect(launchBody({ agent: "gemini", prompt: "hi", workdir: " ~/w ", model: "", timeout: "30" })).toEqual({
      body: { agent: "gemini", prompt: "hi", workdir: "~/w", timeoutS: 30 },
    });
    expect(launchBody({ agent: "gemini", prompt: "hi", workdir: "", model: "", timeout: "1.5" })).toMatchObject({ field: "timeoutS" });
  });

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
