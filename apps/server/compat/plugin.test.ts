// The repository's Claude Code plugin (.claude-plugin/marketplace.json, plugins/corral), installed
// as a user would, with each Claude Code version the suite pins: `claude plugin marketplace add
// <checkout>`, `claude plugin install corral@corral`, then `claude mcp list` shows the plugin's
// server connected to Corral with the URL and token from the environment (CORRAL_URL, CORRAL_TOKEN,
// CORRAL_MCP_PATH), and refused with a wrong token.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../test/helpers.js";
import { claudeEnv, clientBuilds, describeRun, runClient } from "./lib/clients.js";

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

for (const build of clientBuilds("claude")) {
  describe(`the Corral plugin in Claude Code ${build.label}`, () => {
    let server: TestServer;
    let home: string;
    let project: string;

    const claude = (args: string[], env: Record<string, string> = {}) =>
      runClient(build.bin, args, { cwd: project, env: { ...claudeEnv(home, null), ...env }, timeoutMs: 120_000 });
    /** The plugin server's line of `claude mcp list` (it exits 0 even when a server fails). */
    const status = async (env: Record<string, string>) => {
      const run = await claude(["mcp", "list"], env);
      expect(run.code, describeRun(run)).toBe(0);
      return run.stdout.split("\n").find((line) => line.startsWith("plugin:corral:corral: ")) ?? describeRun(run);
    };

    beforeAll(async () => {
      server = await startServer();
      home = path.join(server.root, "home");
      project = path.join(server.root, "project");
      mkdirSync(home, { recursive: true });
      mkdirSync(project, { recursive: true });
    });
    afterAll(async () => {
      await server?.close();
    });

    it("validates, adds from the checkout's marketplace, installs, and connects with the URL and token from the environment", async () => {
      if (build.version !== "2.1.197") {
        // `plugin validate` came after the oldest pinned build.
        const validated = await claude(["plugin", "validate", checkout]);
        expect(validated.code, describeRun(validated)).toBe(0);
      }
      const added = await claude(["plugin", "marketplace", "add", checkout]);
      expect(added.code, describeRun(added)).toBe(0);
      expect(added.stdout).toMatch(/Successfully added marketplace: corral/);
      const installed = await claude(["plugin", "install", "corral@corral"]);
      expect(installed.code, describeRun(installed)).toBe(0);
      if (build.version !== "2.1.197") {
        // The skill and the three commands load with it (commands count as skills there).
        const details = await claude(["plugin", "details", "corral@corral"]);
        expect(details.stdout, describeRun(details)).toMatch(/Skills \(4\)\s+delegate, delegate-with-corral, review, status/);
        expect(details.stdout).toMatch(/MCP servers \(1\)\s+corral/);
      }

      const env = { CORRAL_URL: server.url, CORRAL_TOKEN: server.token };
      expect(await status(env)).toMatch(new RegExp(`^plugin:corral:corral: ${server.url}/mcp\\?toolsets=worktrees \\(HTTP\\) - ✔ Connected`));
      // One agent's mount instead, as pyCorral names its tools.
      expect(await status({ ...env, CORRAL_MCP_PATH: "/mcp/gemini" })).toMatch(
        new RegExp(`^plugin:corral:corral: ${server.url}/mcp/gemini \\(HTTP\\) - ✔ Connected`),
      );
      // A negative control: a wrong token is told apart.
      const refused = await status({ ...env, CORRAL_TOKEN: "not-the-token-0000" });
      expect(refused).toMatch(/Failed to connect/);
      expect(refused).not.toMatch(/Connected/);
    });
  });
}
