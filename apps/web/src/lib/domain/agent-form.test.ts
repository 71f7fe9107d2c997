import type { AgentField, AgentKindDescriptor, AgentWithAvailability } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../api/client.js";
import { type AgentFormState, createBody, formFields, formFromAgent, isShown, newAgentForm, updateBody } from "./agent-form.js";

const field = (spec: Pick<AgentField, "name" | "label" | "input" | "whenEmpty"> & Partial<AgentField>): AgentField => ({
  hint: null,
  required: null,
  secret: false,
  default: null,
  createOnly: false,
  shownWhen: null,
  wide: false,
  ...spec,
});

/** A kind made up for these tests, with an input of every type: the form knows no real one. */
const parrot: AgentKindDescriptor = {
  kind: "parrot",
  adding: { title: "Add a parrot", intro: "Says the prompt back.", primary: true, presets: [] },
  ollamaModels: false,
  fields: [
    field({ name: "name", label: "Name", input: { type: "text" }, whenEmpty: "blank", createOnly: true }),
    field({ name: "command", label: "Perch", input: { type: "text" }, whenEmpty: "default", required: "a parrot agent needs its perch" }),
    field({ name: "workdir", label: "Workdir", input: { type: "text" }, whenEmpty: "unchanged" }),
    field({ name: "model", label: "Default model", input: { type: "text" }, whenEmpty: "default" }),
    field({ name: "timeoutS", label: "Timeout (s)", input: { type: "number" }, whenEmpty: "unchanged" }),
    field({ name: "maxSteps", label: "Step limit", input: { type: "number" }, whenEmpty: "default" }),
    field({
      name: "api",
      label: "API",
      input: {
        type: "select",
        options: [
          { value: "openai", label: "OpenAI" },
          { value: "google", label: "Google" },
        ],
      },
      whenEmpty: "default",
      default: "google",
    }),
    field({ name: "role", label: "Role", input: { type: "multiline", rows: 3 }, whenEmpty: "default", wide: true }),
    field({
      name: "tools",
      label: "Tools",
      input: { type: "checklist", options: ["read_file", "grep", "http_get"].map((value) => ({ value, label: value })) },
      whenEmpty: "blank",
      default: ["read_file"],
      wide: true,
    }),
    field({
      name: "allowedHosts",
      label: "Hosts",
      input: { type: "list", rows: 2, split: "words", mono: false },
      whenEmpty: "default",
      shownWhen: { field: "tools", includes: "http_get" },
      wide: true,
    }),
    field({
      name: "args",
      label: "Arguments",
      input: { type: "list", rows: 3, split: "lines", mono: true },
      whenEmpty: "blank",
      default: ["{prompt}"],
      wide: true,
    }),
    field({ name: "env", label: "Environment", input: { type: "env", rows: 2 }, whenEmpty: "blank", wide: true }),
    field({ name: "description", label: "Description", input: { type: "text" }, whenEmpty: "blank", wide: true }),
  ],
};

describe("agent forms, from the kind's fields", () => {
  it("a new agent's form starts at the kind's defaults", () => {
    expect(newAgentForm(parrot)).toMatchObject({ name: "", command: "", api: "google", tools: ["read_file"], args: "{prompt}", env: "" });
  });

  it("creates an agent: values as their inputs read, empty optional fields left out, empty lists and text sent empty", () => {
    const form = {
      ...newAgentForm(parrot),
      name: " polly ",
      command: " /bin/parrot ",
      args: "{prompt}\n --flag",
      env: "A=1\n\nB=x=y",
      timeoutS: " 30 ",
    };
    expect(createBody(form, parrot)).toEqual({
      body: {
        name: "polly",
        kind: "parrot",
        command: "/bin/parrot",
        timeoutS: 30,
        api: "google",
        tools: ["read_file"],
        args: ["{prompt}", " --flag"],
        env: { A: "1", B: "x=y" },
        description: "",
      },
    });
  });

  it("edits an agent: an emptied optional field goes back to the default (null), a number or workdir left empty stays as it was", () => {
    const form = {
      ...newAgentForm(parrot),
      name: "ignored",
      command: "perch",
      model: "",
      maxSteps: "",
      workdir: " ",
      allowedHosts: "a.example, *.b.example\nc.example",
    };
    const update = updateBody(form, parrot);
    expect(update).toEqual({
      body: {
        command: "perch",
        model: null,
        maxSteps: null,
        api: "google",
        role: null,
        tools: ["read_file"],
        allowedHosts: ["a.example", "*.b.example", "c.example"],
        args: ["{prompt}"],
        env: {},
        description: "",
      },
    });
    // The name is set once, when the agent is added.
    expect(formFields(parrot, false).map((f) => f.name)).not.toContain("name");
  });

  it("refuses before sending, naming the field: a required one left empty, a number that is not whole, a line that is not KEY=VALUE", () => {
    const form = { ...newAgentForm(parrot), name: "polly", command: "perch" };
    expect(createBody({ ...form, command: "  " }, parrot)).toEqual({ field: "command", message: "a parrot agent needs its perch" });
    expect(updateBody({ ...form, maxSteps: "many" }, parrot)).toEqual({ field: "maxSteps", message: "give a whole number" });
    expect(updateBody({ ...form, timeoutS: "1.5" }, parrot)).toEqual({ field: "timeoutS", message: "give a whole number" });
    expect(createBody({ ...form, env: "nope" }, parrot)).toEqual({ field: "env", message: '"nope" is not KEY=VALUE' });
  });

  it("keeps a checklist's choices in the options' order, and shows a field only while the list it depends on holds its value", () => {
    const form = { ...newAgentForm(parrot), name: "polly", command: "perch", tools: ["http_get", "read_file"] };
    expect(createBody(form, parrot)).toMatchObject({ body: { tools: ["read_file", "http_get"] } });
    const hosts = parrot.fields.find((f) => f.name === "allowedHosts") as AgentField;
    expect(isShown(hosts, form)).toBe(true);
    expect(isShown(hosts, { ...form, tools: ["read_file"] })).toBe(false);
    expect(createBody({ ...form, tools: [] }, parrot)).toMatchObject({ body: { tools: [] } });
  });

  it("reads an agent's settings back into its form", () => {
    const agent = {
      name: "polly",
      kind: "parrot",
      command: "perch",
      workdir: "/w",
      model: null,
      timeoutS: 60,
      maxSteps: null,
      permissions: null,
      api: null,
      role: "Say it back.",
      tools: null,
      allowedHosts: ["a.example"],
      args: ["{prompt}", "--loud"],
      env: { A: "1", B: "2" },
      description: "a bird",
    } as unknown as AgentWithAvailability;
    expect(formFromAgent(agent, parrot)).toEqual({
      name: "polly",
      command: "perch",
      workdir: "/w",
      model: "",
      timeoutS: "60",
      maxSteps: "",
      api: "google",
      role: "Say it back.",
      tools: ["read_file"],
      allowedHosts: "a.example",
      args: "{prompt}\n--loud",
      env: "A=1\nB=2",
      description: "a bird",
    });
  });

  it("a toggle holds whether it is ticked, and sends true or false, never nothing (unticked is a setting too)", () => {
    const kind: AgentKindDescriptor = {
      ...parrot,
      fields: [...parrot.fields, field({ name: "worktree", label: "Each job in a worktree", input: { type: "toggle" }, whenEmpty: "unchanged" })],
    };
    const form: AgentFormState = { ...newAgentForm(kind), name: "polly", command: "perch" };
    expect(form.worktree).toBe(false);
    expect(createBody(form, kind)).toMatchObject({ body: { worktree: false } });
    expect(createBody({ ...form, worktree: true }, kind)).toMatchObject({ body: { worktree: true } });
    expect(updateBody(form, kind)).toMatchObject({ body: { worktree: false } });
    const agent = { name: "polly", kind: "parrot", command: "perch", worktree: true } as unknown as AgentWithAvailability;
    expect(formFromAgent(agent, kind).worktree).toBe(true);
    expect(formFromAgent({ ...agent, worktree: false }, kind).worktree).toBe(false);
  });

  it("finds the server's message for a field", () => {
    const err = new ApiRequestError("invalid input", 400, "workdir", [{ field: "workdir", message: "outside the roots" }]);
    expect(err.messageFor("workdir")).toBe("outside the roots");
    expect(err.messageFor("prompt")).toBeUndefined();
  });
});
