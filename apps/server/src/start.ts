import path from "node:path";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig, type AppConfig } from "./config.js";
import { describePgUrl } from "./db/pg/url.js";
import { RegistryError } from "./db/registry-error.js";
import { nodeSupportNote } from "./lib/node-support.js";
import { releaseYoungGeneration } from "./lib/young-generation.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const { app, services, token } = await buildApp(config);
  await app.listen({ host: config.host, port: config.port });
  releaseYoungGeneration();
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const base = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${port}`;
  process.stdout.write(banner(base, token, config));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (config.stopWorkersOnExit) {
      app.log.info({ signal }, "shutting down; cancelling running jobs (CORRAL_STOP_WORKERS_ON_EXIT=1)");
      await services.cancels.cancelAll();
    } else {
      app.log.info({ signal }, "shutting down; running workers keep going and are picked up at the next start");
    }
    await app.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/**
 * The URL to open, with the token when a person reads stdout. The JSON log goes to stdout too: when
 * that is a file or a pipe (a service manager, `> corral.log`), the banner says where the token is
 * instead of writing it into the log.
 */
function banner(base: string, token: string, config: AppConfig): string {
  const where = config.token ? "CORRAL_TOKEN" : `the file ${path.join(config.dataDir, "token")}`;
  const open = process.stdout.isTTY
    ? `${base}/?token=${token}`
    : `${base}/?token=<token>  (the token is in ${where}; it is printed only to a terminal)`;
  const registry = config.databaseUrl ? `\n  Registry: ${describePgUrl(config.databaseUrl)}` : "";
  const note = nodeSupportNote();
  const node = note ? `\n  Node:  ${note}` : "";
  return `\nCorral is running.\n  Open:  ${open}\n  MCP:   ${base}/mcp  (header Authorization: Bearer <token>)\n  Data:  ${config.dataDir}${registry}${node}\n\n`;
}

/** What went wrong at start, and what to do about it. */
function startError(err: unknown): string {
  if (err instanceof ConfigError || err instanceof RegistryError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") return "Corral could not start: the port is in use (another Corral?). Stop it, or choose another port with CORRAL_PORT.";
  if (code === "EACCES") return "Corral could not start: not allowed to listen on that port. Choose a port above 1024 with CORRAL_PORT.";
  if (code === "EADDRNOTAVAIL") return "Corral could not start: CORRAL_HOST is not an address of this machine.";
  return `Corral could not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${startError(err)}\n`);
  process.exit(1);
});
