/**
 * What the start-up banner says of the Node.js running Corral: nothing on the supported lines
 * (22 and 24, and newer), one line on Node 20, which still runs Corral (the machines it was built
 * on have it) but reached its end of life on 2026-04-30 and gets no security fixes.
 */
export function nodeSupportNote(version: string = process.versions.node): string | null {
  const major = Number(version.split(".")[0]);
  if (major >= 22) return null;
  return `Node.js ${version} is past its end of life (2026-04-30) and gets no security fixes; Corral runs on it, but move to Node.js 22 or 24`;
}
