import { describe, expect, it } from "vitest";
import { createBody, newAgentForm, updateBody } from "./agent-form.js";
import { ApiRequestError } from "../../api/client.js";

describe("forms", () => {
  it("builds a command agent from the form", () => {
    const form = { ...newAgentForm("command"), name: "echoer", command: "echo", args: "{prompt}\n--flag", env: "A=1" };
    expect(createBody(form, "command")).toEqual({
      body: { name: "echoer", kind: "command", command: "echo", args: ["{prompt}", "--flag"], env: { A: "1" }, description: "" },
    });
    expect(createBody({ ...form, env: "nope" }, "command")).toMatchObject({ field: "env" });
  });

  it("sends a runner label when given, and clears it when emptied on an edit", () => {
    const form = { ...newAgentForm("command"), name: "gpu_echo", command: "echo", runnerLabel: " gpu " };
    expect(createBody(form, "command")).toMatchObject({ body: { runnerLabel: "gpu" } });
    expect(updateBody({ ...form, runnerLabel: "" }, "command")).toMatchObject({ body: { runnerLabel: null } });
  });

  it("builds an API agent from the form: its API, key variable, role, tools, hosts and step limit", () => {
    const form = {
      ...newAgentForm("api"),
      name: "scout",
      api: "anthropic" as const,
      model: "claude-haiku-4-5",
      apiKeyEnv: "ANTHROPIC_API_KEY",
      role: "You are a scout.",
      tools: ["grep" as const, "http_get" as const],
      allowedHosts: "docs.example.com\n*.example.org",
      maxSteps: "12",
    };
    expect(createBody(form, "api")).toEqual({
      body: {
        name: "scout",
        kind: "api",
        model: "claude-haiku-4-5",
        description: "",
        env: {},
        api: "anthropic",
        baseUrl: null,
        apiKeyEnv: "ANTHROPIC_API_KEY",
        role: "You are a scout.",
        tools: ["grep", "http_get"],
        allowedHosts: ["docs.example.com", "*.example.org"],
        maxSteps: 12,
      },
    });
    expect(createBody({ ...form, maxSteps: "many" }, "api")).toMatchObject({ field: "maxSteps" });
  });

  it("edits an OpenCode server agent's address, not a binary", () => {
    const form = { ...newAgentForm("command"), baseUrl: " http://127.0.0.1:4096 ", command: "ignored" };
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
