import type { AgentField, AgentKindDescriptor, AgentWithAvailability } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { formFromAgent, updateBody } from "./agent-form.js";

/** A kind whose tools checklist offers fewer values than the server takes, as claude's offers glob and not list_files. */
const tools: AgentField = {
  name: "tools",
  label: "Tools",
  hint: null,
  required: null,
  secret: false,
  default: null,
  createOnly: false,
  shownWhen: null,
  wide: true,
  input: { type: "checklist", options: ["read_file", "glob", "bash"].map((value) => ({ value, label: value })) },
  whenEmpty: "default",
};
const kind: AgentKindDescriptor = { kind: "claude", adding: null, ollamaModels: false, fields: [tools] };

describe("the agent form's checklist, attacked with a value it does not offer", () => {
  it("an edit keeps an agent's tool the list does not offer: dropped, tools [list_files] would be saved as [] (none ticked, the kind's default set)", () => {
    const agent = { name: "c", kind: "claude", tools: ["list_files"] } as unknown as AgentWithAvailability;
    expect(updateBody(formFromAgent(agent, kind), kind)).toEqual({ body: { tools: ["list_files"] } });
    const mixed = { ...agent, tools: ["bash", "list_files", "read_file"] } as unknown as AgentWithAvailability;
    expect(updateBody(formFromAgent(mixed, kind), kind)).toEqual({ body: { tools: ["read_file", "bash", "list_files"] } });
  });

  it("none ticked is still the kind's default (null), and unticking what the list offers still takes it out", () => {
    const agent = { name: "c", kind: "claude", tools: ["read_file", "list_files"] } as unknown as AgentWithAvailability;
    expect(updateBody({ ...formFromAgent(agent, kind), tools: ["list_files"] }, kind)).toEqual({ body: { tools: ["list_files"] } });
    expect(updateBody({ tools: [] }, kind)).toEqual({ body: { tools: null } });
  });
});
