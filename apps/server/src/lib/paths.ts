import path from "node:path";

/** `child` is `parent` or lies below it (lexically: resolve links first where they matter). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}
