import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../api/client.js";
import { panelErrors } from "./api-errors.js";
import {
  agentsToTick,
  eachAgentsDefault,
  emptyForm,
  hintAgent,
  launchBody,
  launchManyBody,
  recallLaunch,
  rememberLaunch,
  sharingBlocked,
  workdirHint,
  worktreeBlocked,
  worktreeByDefault,
  worktreeChecked,
} from "./launch-form.js";

const form = { ...emptyForm, agent: "gemini", prompt: "hi" };

describe("the Launch form", () => {
  it("builds the body the server takes", () => {
    expect(launchBody({ ...form, workdir: " ~/w ", timeout: "30" })).toEqual({
      body: { agent: "gemini", prompt: "hi", workdir: "~/w", timeoutS: 30 },
    });
    expect(launchBody({ ...form, sharedWorkdir: true })).toEqual({ body: { agent: "gemini", prompt: "hi", sharedWorkdir: true } });
  });

  it("builds the body for several agents, and names its bad fields the same way", () => {
    const many = { ...form, many: true, agents: ["gemini", "codex"], workdir: " ~/w ", sharedWorkdir: true, session: "abcdef123456" };
    expect(launchManyBody(many)).toEqual({ body: { agents: ["gemini", "codex"], prompt: "hi", workdir: "~/w", sharedWorkdir: true } });
    expect(launchManyBody({ ...many, agents: [], prompt: "" })).toEqual({
      errors: { agents: "name at least one agent", prompt: "the prompt is empty" },
    });
  });

  it("names every bad field at once, in sentences that name the field", () => {
    const built = launchBody({ ...form, prompt: "", timeout: "0" });
    expect(built).toEqual({ errors: { prompt: "the prompt is empty", timeoutS: "the timeout must be at least 1" } });
    expect(launchBody({ ...form, timeout: "1.5" })).toEqual({ errors: { timeoutS: "the timeout must be a whole number" } });
    expect(launchBody({ ...form, timeout: "soon" })).toEqual({ errors: { timeoutS: "the timeout must be a number" } });
  });

  it("takes a cost and a token limit, a typed $ too, and names what is wrong with each", () => {
    expect(launchBody({ ...form, maxCost: " $0.50 ", maxTokens: "20000" })).toEqual({
      body: { agent: "gemini", prompt: "hi", maxCostUsd: 0.5, maxTokens: 20000 },
    });
    const built = launchBody({ ...form, maxCost: "-1", maxTokens: "lots" });
    expect(built).toEqual({ errors: { maxCostUsd: "the cost limit must be more than 0", maxTokens: "the token limit must be a number" } });
  });

  it("remembers the last agent and workdir, and survives a storage that refuses or holds junk", () => {
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
    expect(recallLaunch(storage)).toBeNull();
    rememberLaunch(storage, { agent: "codex", workdir: "/w" });
    expect(recallLaunch(storage)).toEqual({ agent: "codex", workdir: "/w" });
    rememberLaunch(storage, { agent: "codex", workdir: "/w", agents: ["codex", "gemini"] });
    expect(recallLaunch(storage)).toEqual({ agent: "codex", workdir: "/w", agents: ["codex", "gemini"] });
    store.set("corral.launch", JSON.stringify({ agent: "codex", workdir: "/w", agents: "codex" }));
    expect(recallLaunch(storage)).toEqual({ agent: "codex", workdir: "/w" });
    store.set("corral.launch", "{not json");
    expect(recallLaunch(storage)).toBeNull();
    expect(() =>
      rememberLaunch(
        {
          setItem: () => {
            throw new Error("quota");
          },
        },
        { agent: "a", workdir: "" },
      ),
    ).not.toThrow();
  });
});

describe("several at once: what is ticked, and the hints", () => {
  const enabled = ["claude", "codex", "gemini"];
  it("ticks nothing the user did not choose: the last launch's agents, else the one chosen, else none", () => {
    expect(agentsToTick(null, undefined, enabled)).toEqual([]);
    expect(agentsToTick("codex", undefined, enabled)).toEqual(["codex"]);
    expect(agentsToTick("codex", ["gemini", "claude"], enabled)).toEqual(["claude", "gemini"]);
    // Agents since disabled or deleted are not ticked again.
    expect(agentsToTick(null, ["gone"], enabled)).toEqual([]);
    expect(agentsToTick("gone", undefined, enabled)).toEqual([]);
  });

  it("hints tell of the agents chosen only: the one, each ticked, or none", () => {
    const many = { ...emptyForm, agent: "claude", many: true };
    const timeouts: Record<string, string> = { claude: "600s", codex: "900s" };
    const timeoutOf = (name: string) => timeouts[name] ?? null;
    expect(hintAgent({ ...emptyForm, agent: "claude" })).toBe("claude");
    expect(hintAgent(many)).toBe("");
    expect(hintAgent({ ...many, agents: ["codex"] })).toBe("codex");
    expect(hintAgent({ ...many, agents: ["claude", "codex"] })).toBe("");
    expect(eachAgentsDefault({ ...emptyForm, agent: "claude" }, timeoutOf)).toBeNull();
    expect(eachAgentsDefault({ ...many, agents: ["codex"] }, timeoutOf)).toBeNull();
    expect(eachAgentsDefault(many, timeoutOf)).toBe("empty: each agent's own default");
    expect(eachAgentsDefault({ ...many, agents: ["claude", "codex", "gemini"] }, timeoutOf)).toBe(
      "empty: each agent's own (claude: 600s, codex: 900s, gemini: the CLI's default)",
    );
  });
});

describe("the worktree box and the agents' default", () => {
  // codex's jobs run in a worktree unless a launch says not; gemini's in their workdir.
  const agents = [
    { name: "gemini", worktree: false },
    { name: "codex", worktree: true },
  ];

  it("starts ticked for an agent whose default is a worktree, and follows the agent chosen until touched", () => {
    expect(worktreeChecked({ ...form, agent: "codex" }, agents)).toBe(true);
    expect(worktreeChecked({ ...form, agent: "gemini" }, agents)).toBe(false);
    // Touched, it stays as the user left it whatever agent is chosen next.
    expect(worktreeChecked({ ...form, agent: "gemini", worktree: true }, agents)).toBe(true);
    expect(worktreeChecked({ ...form, agent: "codex", worktree: false }, agents)).toBe(false);
    // Before the agents are read, or for an agent not known: unticked.
    expect(worktreeChecked({ ...form, agent: "codex" }, [])).toBe(false);
    expect(worktreeByDefault({ ...form, agent: "codex" }, agents)).toEqual(["codex"]);
    expect(worktreeByDefault(form, agents)).toEqual([]);
  });

  it("leaves worktree out when it is the agent's default, and says false when unticked for an agent whose default is a worktree", () => {
    const codex = { ...form, agent: "codex" };
    expect(launchBody(codex, agents)).toEqual({ body: { agent: "codex", prompt: "hi" } });
    expect(launchBody({ ...codex, worktree: true, base: " dev " }, agents)).toEqual({ body: { agent: "codex", prompt: "hi", base: "dev" } });
    expect(launchBody({ ...codex, worktree: false, base: "dev" }, agents)).toEqual({ body: { agent: "codex", prompt: "hi", worktree: false } });
    expect(launchBody({ ...form, worktree: false }, agents)).toEqual({ body: { agent: "gemini", prompt: "hi" } });
    expect(launchBody({ ...form, worktree: true }, agents)).toEqual({ body: { agent: "gemini", prompt: "hi", worktree: true } });
    // Without the agents read, a ticked box is sent as before.
    expect(launchBody({ ...codex, worktree: true })).toEqual({ body: { agent: "codex", prompt: "hi", worktree: true } });
  });

  it("launched to several, is ticked when one of them defaults to a worktree, and says so to the others", () => {
    const many = { ...form, many: true, agents: ["gemini", "codex"] };
    expect(worktreeChecked(many, agents)).toBe(true);
    expect(worktreeByDefault(many, agents)).toEqual(["codex"]);
    expect(launchManyBody(many, agents)).toEqual({ body: { agents: ["gemini", "codex"], prompt: "hi", worktree: true } });
    expect(launchManyBody({ ...many, worktree: false }, agents)).toEqual({ body: { agents: ["gemini", "codex"], prompt: "hi", worktree: false } });
    expect(launchManyBody({ ...many, agents: ["codex"] }, agents)).toEqual({ body: { agents: ["codex"], prompt: "hi" } });
    expect(worktreeChecked({ ...many, agents: ["gemini"] }, agents)).toBe(false);
    expect(launchManyBody({ ...many, agents: ["gemini"] }, agents)).toEqual({ body: { agents: ["gemini"], prompt: "hi" } });
  });

  it("a shared workdir and a worktree exclude each other: each box is off while the other is ticked, saying why", () => {
    const many = { ...form, many: true, agents: ["gemini", "codex"] };
    // codex defaults to a worktree: sharing is off until the worktree box is unticked.
    expect(sharingBlocked(many, agents)).toMatch(/^off while the worktree box is ticked/);
    expect(worktreeBlocked(many)).toBeNull();
    const unticked = { ...many, worktree: false };
    expect(sharingBlocked(unticked, agents)).toBeNull();
    const shared = { ...unticked, sharedWorkdir: true };
    expect(worktreeBlocked(shared)).toMatch(/^off while the workdir is shared/);
    // A shared workdir ticked first unticks the agents' default: the body asks for no worktree, which the server takes.
    const sharedFirst = { ...many, sharedWorkdir: true, workdir: "/w" };
    expect(worktreeChecked(sharedFirst, agents)).toBe(false);
    expect(launchManyBody(sharedFirst, agents)).toEqual({
      body: { agents: ["gemini", "codex"], prompt: "hi", workdir: "/w", sharedWorkdir: true, worktree: false },
    });
  });

  it("the Workdir hint says a worktree needs a git repository, and that each job gets its own worktree and branch of it", () => {
    const many = { ...form, many: true, agents: ["gemini", "codex"] };
    expect(workdirHint({ ...many, worktree: false }, agents, true, null)).toBe(
      "each agent works in its own folder here (empty: each in its own workdir)",
    );
    expect(workdirHint({ ...many, worktree: false, sharedWorkdir: true }, agents, true, null)).toBe("all the agents work here together");
    const worktrees = workdirHint(many, agents, true, null);
    expect(worktrees).toMatch(/git repository/);
    expect(worktrees).toMatch(/each agent's job gets its own worktree and branch/);
    expect(worktrees).not.toMatch(/own folder here/);
    expect(workdirHint({ ...form, agent: "codex" }, agents, false, "/home/me/repo")).toBe(
      "must be in a git repository: the job gets its own worktree and branch of it (default /home/me/repo)",
    );
    expect(workdirHint(form, agents, false, "/home/me/notes")).toBe("default /home/me/notes");
    expect(workdirHint(form, agents, false, null)).toBe("Recent and allowed directories are offered");
  });
});

describe("server refusals in the panel's words", () => {
  const refused = (
    code: ConstructorParameters<typeof ApiRequestError>[4],
    details: ConstructorParameters<typeof ApiRequestError>[5],
    message: string,
  ) => new ApiRequestError(message, 409, undefined, [], code, details);

  it("speaks neither API nor MCP, and offers the action that fixes it", () => {
    const cases = [
      panelErrors(refused("budget_exceeded", { budgetId: 3 }, "budget exceeded: …; raise it with PATCH /api/costs/budgets/3")),
      panelErrors(refused("workdir_busy", { jobId: "abc123" }, "… wait for that job (corral_wait), or pass shared_workdir: true")),
      panelErrors(refused("agent_disabled", { agent: "kiro" }, "agent kiro is disabled")),
      panelErrors(refused("agent_not_deletable", { agent: "gemini" }, "gemini is built in; disable it instead (enabled: false)")),
    ];
    cases.push(panelErrors(new ApiRequestError("relaunchOf names job abcdef123456, which does not exist; …", 400, "relaunchOf", [])));
    for (const [e] of cases) expect(e?.text).not.toMatch(/PATCH|\/api\/|corral_|shared_workdir|enabled: false|relaunchOf/);
    expect(cases.map(([e]) => [e?.field, e?.action])).toEqual([
      [null, { kind: "open-budget", href: "/costs#budget-3" }],
      ["workdir", { kind: "share-workdir", jobId: "abc123" }],
      [null, { kind: "enable-agent", agent: "kiro" }],
      [null, { kind: "disable-agent", agent: "gemini" }],
      [null, undefined],
    ]);
  });

  it("a used-up budget is named with its provider, what it used and when it starts again", () => {
    const now = new Date(2026, 11, 7, 15, 0).getTime();
    const budget = {
      provider: "anthropic",
      period: "day" as const,
      maxCostUsd: 1,
      maxTokens: null,
      usedCostUsd: 1.2,
      usedTokens: 900,
      periodEnd: new Date(2026, 11, 8).getTime(),
    };
    const [cost] = panelErrors(refused("budget_exceeded", { budgetId: 3, budget, agent: "claude" }, "budget exceeded: …"), now);
    expect(cost?.text).toMatch(
      /^anthropic's daily budget of \$1\.00 is used up: \$1\.20 used today \(claude bills to anthropic\)\. Raise the budget, or wait: it starts again \D*8\b/,
    );
    const tokens = { ...budget, period: "month" as const, maxCostUsd: null, maxTokens: 1000, usedTokens: 1500 };
    const [tok] = panelErrors(refused("budget_exceeded", { budgetId: 3, budget: tokens }, "budget exceeded: …"), now);
    expect(tok?.text).toMatch(/^anthropic's monthly budget of 1,000 tokens is used up: 1,500 tokens used this month\. /);
    const [cap] = panelErrors(refused("budget_exceeded", { budgetId: 3, budget: { ...budget, usedCostUsd: 0.6 } }, "budget exceeded: …"), now);
    expect(cap?.text).toMatch(
      /^This job's cost limit is more than the \$0\.40 left today in anthropic's daily budget of \$1\.00\. Lower the cost limit/,
    );
  });

  it("puts each schema issue under its field", () => {
    const err = new ApiRequestError("invalid input", 400, "prompt", [
      { field: "prompt", message: "the prompt is empty" },
      { field: "timeoutS", message: "the timeout must be at least 1" },
    ]);
    expect(panelErrors(err)).toEqual([
      { field: "prompt", text: "the prompt is empty" },
      { field: "timeoutS", text: "the timeout must be at least 1" },
    ]);
  });
});
