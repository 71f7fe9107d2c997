import v8 from "node:v8";

// V8 doubles its young generation each time most of what it holds survives a scavenge, and a
// start is all survivors (modules, routes, schemas): a started server held 11 MiB of empty young
// generation, an eighth of its idle memory, until V8 gave it back some 20 s later (issue 13's idle
// RSS). Holding the growth factor at 1 while the server starts keeps the young generation at its
// first size; released, it grows to V8's usual bounds again when bursts of jobs need it.
const GROWTH_FACTOR = "--semi-space-growth-factor";
const V8_DEFAULT_GROWTH = 2;

/** Called before anything else is loaded (server.ts). */
export function holdYoungGeneration(): void {
  v8.setFlagsFromString(`${GROWTH_FACTOR}=1`);
}

/** Called once the server listens. */
export function releaseYoungGeneration(): void {
  v8.setFlagsFromString(`${GROWTH_FACTOR}=${V8_DEFAULT_GROWTH}`);
}
