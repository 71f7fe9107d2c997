import { defineCommand } from "../command.js";

export const serve = defineCommand({
  name: "serve",
  summary: "start the Corral server here (the panel, REST, MCP and the WebSocket on one port)",
  usage: "",
  help: `Starts the server in this process, as \`pnpm start\` does, with its settings from the
environment (CORRAL_HOST, CORRAL_PORT, CORRAL_DATA_DIR, CORRAL_TOKEN…: docs/settings.md). It prints
the URL to open, and runs until stopped (Ctrl-C or SIGTERM). \`corral service install\` makes it a
systemd user service.`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run() {
    // The server's own entry: it holds the young generation before the server's modules load.
    await import("../../server.js");
    // It runs until a signal stops it, and exits with its own code then.
    return new Promise<number>(() => undefined);
  },
});
