import { readFileSync } from "node:fs";
import path from "node:path";
import { installRoot } from "./install-root.js";

/** The version this checkout says it is (apps/server/package.json), as runners announce it. */
export function corralVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(installRoot, "apps/server/package.json"), "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
}
