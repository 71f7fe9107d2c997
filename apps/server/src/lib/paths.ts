import path from "node:path";

/** `child` is `parent` or lies below it (lexically: resolve links first where they matter). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** `absolute` (resolved) and every directory above it, up to the root: the only paths it can lie inside. */
export function selfAndAncestors(absolute: string): string[] {
  const paths = [absolute];
  for (let dir = absolute; dir !== path.dirname(dir); ) {
    dir = path.dirname(dir);
    paths.push(dir);
  }
  return paths;
}
