import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ConfigError, loadConfig } from "../config.js";
import { CliError, EXIT } from "./exit-codes.js";

/** What the `corral` command reads beyond the server's settings; `.describe()` is docs/settings.md's text. */
export const CliEnvSchema = z.object({
  CORRAL_URL: z
    .string()
    .optional()
    .describe(
      "Where the `corral` command finds the server (read by the command only; see [The corral command](api.md#the-corral-command)). A server listening on `0.0.0.0` is reached on `127.0.0.1`.",
    )
    .meta({ defaultText: "`http://CORRAL_HOST:CORRAL_PORT`" }),
});

/** Where the server is and the token it takes. */
export interface Target {
  url: string;
  token: string;
  /** Where the token came from, for the message when the server refuses it. */
  tokenSource: string;
}

/** Addresses a server listens on for every interface; a client reaches it on loopback. */
const ANY_ADDRESS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * `CORRAL_URL` and `CORRAL_TOKEN` when set; else what the server itself would read from the same
 * environment: its host and port, and the token file in its data dir (read, never created here).
 */
export function resolveTarget(env: NodeJS.ProcessEnv): Target {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`corral reads the server's settings, and they are wrong: ${err.message}`, EXIT.usage);
    throw err;
  }
  const url = (CliEnvSchema.parse(env).CORRAL_URL || defaultUrl(config.host, config.port)).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(url)) throw new CliError(`CORRAL_URL must start with http:// or https:// (got ${JSON.stringify(url)})`, EXIT.usage);
  if (config.token) return { url, token: config.token, tokenSource: "CORRAL_TOKEN" };
  const file = path.join(config.dataDir, "token");
  let token = "";
  try {
    token = readFileSync(file, "utf8").trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw new CliError(`cannot read the token file ${file}: ${(err as Error).message}`, EXIT.unauthorized);
  }
  if (!token) {
    throw new CliError(
      `no token: ${file} does not exist. The server writes it when it first starts (corral serve); ` +
        "if it runs with another data dir, set CORRAL_DATA_DIR to it, or set CORRAL_TOKEN to the server's token",
      EXIT.unauthorized,
    );
  }
  return { url, token, tokenSource: file };
}

function defaultUrl(host: string, port: number): string {
  const reachable = ANY_ADDRESS.has(host) ? "127.0.0.1" : host;
  return `http://${reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable}:${port}`;
}
