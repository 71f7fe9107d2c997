// @vitest-environment happy-dom
import type { AgentField, AgentKindDescriptor, CreateAgentBody, UpdateAgentBody } from "@corral/shared";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiRequestError } from "../api/client.js";
import { createBody, newAgentForm, updateBody } from "../lib/domain/agent-form.js";
import { AgentForm } from "./agent-form.js";

afterEach(cleanup);

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

/** A kind made up for the test: the form draws whatever fields a kind declares. */
const parrot: AgentKindDescriptor = {
  kind: "parrot",
  adding: { title: "Add a parrot", intro: "", primary: true, presets: [] },
  ollamaModels: false,
  fields: [
    field({ name: "name", label: "Name", hint: "becomes the tools' prefix", input: { type: "text" }, whenEmpty: "blank", createOnly: true }),
    field({ name: "command", label: "Perch", input: { type: "text" }, whenEmpty: "default", required: "a parrot agent needs its perch" }),
    field({ name: "apiKeyEnv", label: "Key variable", input: { type: "text" }, whenEmpty: "default", secret: true }),
    field({ name: "timeoutS", label: "Timeout (s)", input: { type: "number" }, whenEmpty: "unchanged" }),
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
      default: "openai",
    }),
    field({
      name: "tools",
      label: "Tools",
      input: { type: "checklist", options: ["read_file", "http_get"].map((value) => ({ value, label: `may ${value}` })) },
      whenEmpty: "blank",
      default: ["read_file"],
      wide: true,
    }),
    field({
      name: "allowedHosts",
      label: "Hosts http_get may reach",
      input: { type: "list", rows: 2, split: "words", mono: false },
      whenEmpty: "default",
      shownWhen: { field: "tools", includes: "http_get" },
      wide: true,
    }),
    field({ name: "env", label: "Environment", input: { type: "env", rows: 2 }, whenEmpty: "blank", wide: true }),
  ],
};

function addForm(save: (body: CreateAgentBody) => Promise<unknown>) {
  return render(
    <AgentForm
      initial={newAgentForm(parrot)}
      kind={parrot}
      isNew
      toBody={(f) => createBody(f, parrot)}
      save={save}
      onDone={() => {}}
      submitLabel="Add agent"
    />,
  );
}

const input = (label: string) => screen.getByLabelText(label) as HTMLInputElement;

describe("the agent form, drawn from the kind's fields", () => {
  it("labels every field, ties hints to their inputs, and marks a secret's field so no browser keeps it", () => {
    addForm(async () => {});
    expect(input("Name").getAttribute("aria-describedby")).toBe("agent-name-hint");
    expect(document.getElementById("agent-name-hint")?.textContent).toBe("becomes the tools' prefix");
    expect(input("Timeout (s)").getAttribute("inputmode")).toBe("numeric");
    expect((screen.getByLabelText("API") as HTMLSelectElement).value).toBe("openai");
    expect(input("Key variable").getAttribute("autocomplete")).toBe("off");
    expect(screen.getByRole("group", { name: "Tools" })).toBeTruthy();
  });

  it("says a required field is missing at the field, announced, before anything is sent; the message goes once the field changes", async () => {
    const save = vi.fn(async () => {});
    addForm(save);
    fireEvent.change(input("Name"), { target: { value: "polly" } });
    fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
    const error = await screen.findByRole("alert");
    expect(error.textContent).toBe("a parrot agent needs its perch");
    expect(error.id).toBe("agent-command-error");
    expect(input("Perch").getAttribute("aria-invalid")).toBe("true");
    expect(input("Perch").getAttribute("aria-describedby")).toBe("agent-command-error");
    expect(save).not.toHaveBeenCalled();
    fireEvent.change(input("Perch"), { target: { value: "branch" } });
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows the hosts only while http_get is chosen, and sends what was chosen", async () => {
    const save = vi.fn(async (_body: CreateAgentBody) => {});
    addForm(save);
    expect(screen.queryByLabelText("Hosts http_get may reach")).toBeNull();
    fireEvent.click(screen.getByLabelText(/^http_get/));
    fireEvent.change(input("Hosts http_get may reach"), { target: { value: "docs.example.com" } });
    fireEvent.change(input("Name"), { target: { value: "polly" } });
    fireEvent.change(input("Perch"), { target: { value: "branch" } });
    fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0]?.[0]).toMatchObject({
      name: "polly",
      kind: "parrot",
      command: "branch",
      tools: ["read_file", "http_get"],
      allowedHosts: ["docs.example.com"],
    });
  });

  it("a preset fills the fields it names and keeps the rest as typed; the edit form offers none", async () => {
    const kind: AgentKindDescriptor = {
      ...parrot,
      adding: { title: "Add a parrot", intro: "", primary: true, presets: [{ label: "Norwegian Blue", values: { name: "blue", command: "fjord" } }] },
    };
    const save = vi.fn(async (_body: CreateAgentBody) => {});
    const form = render(
      <AgentForm
        initial={newAgentForm(kind)}
        kind={kind}
        isNew
        toBody={(f) => createBody(f, kind)}
        save={save}
        onDone={() => {}}
        submitLabel="Add agent"
      />,
    );
    fireEvent.change(input("Key variable"), { target: { value: "PARROT_KEY" } });
    fireEvent.click(screen.getByRole("button", { name: "Norwegian Blue" }));
    expect(input("Name").value).toBe("blue");
    expect(input("Perch").value).toBe("fjord");
    expect(input("Key variable").value).toBe("PARROT_KEY");
    fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0]?.[0]).toMatchObject({ name: "blue", command: "fjord", apiKeyEnv: "PARROT_KEY" });
    form.unmount();
    render(
      <AgentForm
        initial={newAgentForm(kind)}
        kind={kind}
        isNew={false}
        toBody={(f) => updateBody(f, kind)}
        save={async () => {}}
        onDone={() => {}}
        submitLabel="Save"
      />,
    );
    expect(screen.queryByRole("button", { name: "Norwegian Blue" })).toBeNull();
  });

  it("puts the server's refusals at the fields they name, and one naming no field of the form above the buttons", async () => {
    const refusal = new ApiRequestError("invalid input", 400, "env.LD_PRELOAD", [
      { field: "env.LD_PRELOAD", message: "LD_PRELOAD makes programs load code" },
      { field: "runnerLabel", message: "runners need the registry in PostgreSQL" },
    ]);
    addForm(async () => {
      throw refusal;
    });
    fireEvent.change(input("Name"), { target: { value: "polly" } });
    fireEvent.change(input("Perch"), { target: { value: "branch" } });
    fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
    await waitFor(() => expect(screen.getAllByRole("alert")).toHaveLength(2));
    expect(document.getElementById("agent-env-error")?.textContent).toBe("LD_PRELOAD makes programs load code");
    expect(screen.getAllByRole("alert").map((a) => a.textContent)).toContain("runners need the registry in PostgreSQL");
  });

  it("a refused save takes the user to the first field it names, focused and scrolled into view, and says so beside the button", async () => {
    const scrolled: string[] = [];
    const scroll = vi.spyOn(HTMLElement.prototype, "scrollIntoView").mockImplementation(function (this: HTMLElement) {
      scrolled.push(this.id || this.className);
    });
    try {
      const refusal = new ApiRequestError("invalid input", 400, "timeoutS", [
        { field: "env.LD_PRELOAD", message: "LD_PRELOAD makes programs load code" },
        { field: "timeoutS", message: "the timeout must be at least 1" },
      ]);
      addForm(async () => {
        throw refusal;
      });
      fireEvent.change(input("Name"), { target: { value: "polly" } });
      fireEvent.change(input("Perch"), { target: { value: "branch" } });
      fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
      // The first in the form's order, not in the refusal's.
      await waitFor(() => expect(document.activeElement).toBe(input("Timeout (s)")));
      expect(scrolled).toEqual(["agent-timeoutS"]);
      expect(input("Timeout (s)").getAttribute("aria-describedby")).toBe("agent-timeoutS-error");
      expect(screen.getByTestId("form-not-saved").textContent).toBe("Not saved: fix Timeout (s), Environment");

      // Refused again with the same error, after the user moved on: taken there again.
      input("Perch").focus();
      fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
      await waitFor(() => expect(scrolled).toHaveLength(2));
      expect(document.activeElement).toBe(input("Timeout (s)"));

      // A required field missing, found before sending: the same.
      fireEvent.change(input("Perch"), { target: { value: "" } });
      fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
      await waitFor(() => expect(document.activeElement).toBe(input("Perch")));
    } finally {
      scroll.mockRestore();
    }
  });

  it("a refusal naming no field of the form is focused beside the buttons", async () => {
    vi.spyOn(HTMLElement.prototype, "scrollIntoView").mockImplementation(() => {});
    addForm(async () => {
      throw new ApiRequestError("runners need the registry in PostgreSQL", 400, "runnerLabel", []);
    });
    fireEvent.change(input("Name"), { target: { value: "polly" } });
    fireEvent.change(input("Perch"), { target: { value: "branch" } });
    fireEvent.click(screen.getByRole("button", { name: "Add agent" }));
    await waitFor(() => expect(document.activeElement?.textContent).toBe("runners need the registry in PostgreSQL"));
    expect(document.activeElement?.getAttribute("role")).toBe("alert");
    expect(screen.queryByTestId("form-not-saved")).toBeNull();
    vi.restoreAllMocks();
  });

  it("draws a toggle as a checkbox with its hint, and sends whether it is ticked", async () => {
    const kind: AgentKindDescriptor = {
      ...parrot,
      fields: [
        ...parrot.fields,
        field({
          name: "worktree",
          label: "Each job in a git worktree of its own",
          hint: "needs a workdir in a git repository",
          input: { type: "toggle" },
          whenEmpty: "unchanged",
        }),
      ],
    };
    const save = vi.fn(async (_body: UpdateAgentBody) => {});
    render(
      <AgentForm
        initial={{ ...newAgentForm(kind), command: "branch" }}
        kind={kind}
        isNew={false}
        toBody={(f) => updateBody(f, kind)}
        save={save}
        onDone={() => {}}
        submitLabel="Save"
      />,
    );
    const box = screen.getByRole("checkbox", { name: "Each job in a git worktree of its own" }) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.getAttribute("aria-describedby")).toBe("agent-worktree-hint");
    expect(document.getElementById("agent-worktree-hint")?.textContent).toBe("needs a workdir in a git repository");
    fireEvent.click(box);
    expect(box.checked).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0]?.[0]).toMatchObject({ command: "branch", worktree: true });
    fireEvent.click(box);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalledTimes(2));
    expect(save.mock.calls[1]?.[0]).toMatchObject({ worktree: false });
  });

  it("sends the hub sessions typed as a list (none: every session), and shows a refused name at the field, saying which entry", async () => {
    const kind: AgentKindDescriptor = {
      ...parrot,
      fields: [
        ...parrot.fields,
        field({
          name: "sessions",
          label: "Hub sessions",
          hint: "empty: every session",
          input: { type: "list", rows: 1, split: "words", mono: true },
          whenEmpty: "blank",
        }),
      ],
    };
    const refusal = new ApiRequestError("invalid input", 400, "sessions.1", [
      { field: "sessions.1", message: "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit" },
    ]);
    const save = vi.fn(async (body: UpdateAgentBody) => {
      if (body.sessions?.includes("-x")) throw refusal;
    });
    render(
      <AgentForm
        initial={{ ...newAgentForm(kind), command: "branch" }}
        kind={kind}
        isNew={false}
        toBody={(f) => updateBody(f, kind)}
        save={save}
        onDone={() => {}}
        submitLabel="Save"
      />,
    );
    const sessions = screen.getByLabelText("Hub sessions") as HTMLTextAreaElement;
    expect(sessions.getAttribute("aria-describedby")).toBe("agent-sessions-hint");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalledTimes(1));
    expect(save.mock.calls[0]?.[0]).toMatchObject({ sessions: [] });

    fireEvent.change(sessions, { target: { value: "review, -x" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    const error = await screen.findByRole("alert");
    expect(save.mock.calls[1]?.[0]).toMatchObject({ sessions: ["review", "-x"] });
    expect(error.id).toBe("agent-sessions-error");
    expect(error.textContent).toBe("entry 2: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
    expect(sessions.getAttribute("aria-invalid")).toBe("true");

    fireEvent.change(sessions, { target: { value: "review\nbuild-42" } });
    expect(screen.queryByRole("alert")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenCalledTimes(3));
    expect(save.mock.calls[2]?.[0]).toMatchObject({ sessions: ["review", "build-42"] });
  });

  it("an edit leaves out what is set only when the agent is added", () => {
    render(
      <AgentForm
        initial={{ ...newAgentForm(parrot), command: "branch" }}
        kind={parrot}
        isNew={false}
        toBody={(f) => updateBody(f, parrot)}
        save={async (_body: UpdateAgentBody) => {}}
        onDone={() => {}}
        submitLabel="Save"
      />,
    );
    expect(screen.queryByLabelText("Name")).toBeNull();
    expect(input("Perch").value).toBe("branch");
  });
});
