import type { DestinationStream, LoggerOptions } from "pino";
import type { AppConfig } from "../config.js";

/**
 * Fields that hold secrets wherever they appear in a log object: the token (headers, cookie,
 * a `token` field) and environment maps (an agent's `env`, the server's environment),
 * which carry API keys. Request lines are not logged at all (app.ts), so `?token=` never is.
 */
const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "headers.cookie",
  "token",
  "*.token",
  "env",
  "*.env",
  "*.*.env",
  "serverEnv",
  "*.serverEnv",
  "config",
  "*.config",
];

export function loggerOptions(config: AppConfig, stream?: DestinationStream): LoggerOptions & { stream?: DestinationStream } {
  return { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, ...(stream ? { stream } : {}) };
}
