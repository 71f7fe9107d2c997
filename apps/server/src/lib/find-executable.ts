import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Finds `name` the way a shell would: a path is taken as is, a bare name is looked up on PATH. */
export function findExecutable(name: string, pathVar: string | undefined): string | null {
  if (name.includes("/")) return isExecutableFile(name) ? path.resolve(name) : null;
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}
