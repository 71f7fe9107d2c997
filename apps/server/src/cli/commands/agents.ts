import type { AgentList } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { oneLine, printJson, table } from "../format.js";

export const agents = defineCommand({
  name: "agents",
  summary: "list the agents, whether each is enabled and installed",
  usage: "",
  help: `Lists every agent: its kind, whether it is enabled, whether its CLI or server is there
(or what to install), its model and where it is defined (the registry or the config file).

  --json             print the list as the REST API answers it: {"agents"}`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run({ json, target }) {
    const list = await request<AgentList>(target(), "GET", "/api/agents");
    if (json) {
      printJson(list);
      return 0;
    }
    const rows = list.agents.map((a) => [
      a.name,
      a.kind,
      a.enabled ? "yes" : "no",
      a.availability.available ? oneLine(a.availability.version ?? "yes", 24) : oneLine(`no: ${a.availability.hint ?? "not found"}`, 60),
      oneLine(a.effectiveModel ?? "-", 40),
      a.source,
    ]);
    process.stdout.write(table(["NAME", "KIND", "ENABLED", "AVAILABLE", "MODEL", "SOURCE"], rows));
    return 0;
  },
});
