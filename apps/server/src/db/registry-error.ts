import path from "node:path";

/**
 * The registry (corral.db) cannot be used: damaged, not a database, locked, unreadable. The
 * message says what is wrong, where the file is and what to do; `server.ts` prints it alone.
 */
export class RegistryError extends Error {
  constructor(
    message: string,
    /** It failed for want of disk space. */
    readonly diskFull = false,
  ) {
    super(message);
  }
}

/** Problems SQLite's integrity check reports; a damaged file has a long list, the first few tell the story. */
const SHOWN_PROBLEMS = 3;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function remedies(file: string, canDump: boolean): string {
  const dir = path.dirname(file);
  const name = path.basename(file);
  const aside = `damaged-${new Date().toISOString().slice(0, 19).replace(/:/g, "-")}`;
  const moveAside = `mkdir ${aside} && mv ${name}* ${aside}/`;
  const steps = [
    `Restore ${name} from a backup into ${dir}, and delete ${name}-wal and ${name}-shm there.`,
    ...(canDump
      ? [
          `Copy out what can still be read (needs the sqlite3 program); the damaged files go to ${path.join(dir, aside)}:\n` +
            `       cd ${shellQuote(dir)} && sqlite3 ${name} .dump | sed '$s/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 recovered.db && ${moveAside} && mv recovered.db ${name}`,
        ]
      : []),
    `Start with an empty registry (agents, jobs and the audit trail start over; job output in ${path.join(dir, "jobs")} stays):\n` +
      `       cd ${shellQuote(dir)} && ${moveAside}`,
  ];
  return `Stop every Corral that uses ${dir}, then do one of these:\n${steps.map((s, i) => `  ${i + 1}. ${s}`).join("\n")}`;
}

/** What SQLite's integrity check found wrong with the file. */
export function damagedRegistry(file: string, problems: string[]): RegistryError {
  const lines = problems.flatMap((p) => p.split("\n")).filter((l) => l.trim() && !l.startsWith("*** in database"));
  const more = lines.length > SHOWN_PROBLEMS ? `\n    (and ${lines.length - SHOWN_PROBLEMS} more)` : "";
  const found = lines
    .slice(0, SHOWN_PROBLEMS)
    .map((l) => `    ${l.trim()}`)
    .join("\n");
  return new RegistryError(`Corral could not start: its registry ${file} is damaged. SQLite found:\n${found}${more}\n${remedies(file, true)}`);
}

/** A failure to open or prepare the registry, as something its owner can act on; other errors pass through. */
export function registryFailure(file: string, err: unknown): unknown {
  if (err instanceof RegistryError) return err;
  const code = String((err as { code?: unknown }).code ?? "");
  const detail = err instanceof Error ? err.message : String(err);
  const dir = path.dirname(file);
  // npm 11 runs a dependency's build only when allowed, and an addon built for another Node will not load.
  if (/Could not locate the bindings file|NODE_MODULE_VERSION/.test(detail)) {
    return new RegistryError(
      `Corral could not start: better-sqlite3, which keeps its registry, has no native addon built for this Node.js (${process.version}). ` +
        "Installed with npm, install it again letting better-sqlite3 build: npm install -g --allow-scripts=better-sqlite3 with the same package or tarball (npm 11 skips a dependency's build unless allowed); " +
        "in a checkout, run node scripts/setup.mjs again.",
    );
  }
  if (code === "SQLITE_NOTADB") {
    return new RegistryError(
      `Corral could not start: ${file} is not an SQLite database (its header is damaged, or another program wrote over it).\n${remedies(file, false)}`,
    );
  }
  if (code.startsWith("SQLITE_CORRUPT")) return damagedRegistry(file, [detail]);
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new RegistryError(
      `Corral could not start: its registry ${file} is locked by another process (another Corral using ${dir}, or a sqlite3 shell in a transaction). Stop that process, or give this Corral its own CORRAL_DATA_DIR.`,
    );
  }
  // SQLite sizes its shared-memory file (-shm) as it opens: on a full disk that is what fails.
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "SQLITE_IOERR_SHMSIZE") {
    return new RegistryError(`Corral could not start: the disk that holds ${dir} is full. Free some space and start again.`, true);
  }
  if (code.startsWith("SQLITE_IOERR") || code === "EIO") {
    return new RegistryError(
      `Corral could not start: reading or writing its registry ${file} failed (${code}: ${detail}). Check the disk, then start again.`,
    );
  }
  if (["SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH", "EACCES", "EPERM", "EISDIR", "EROFS"].includes(code) || code.startsWith("SQLITE_READONLY")) {
    return new RegistryError(
      `Corral could not start: cannot open its registry ${file} for writing (${code}: ${detail}). It must be a file this user can read and write, in a directory it can write (SQLite keeps ${path.basename(file)}-wal and ${path.basename(file)}-shm beside it); or set CORRAL_DATA_DIR to another directory.`,
    );
  }
  return err;
}

/** PostgreSQL's answers that mean "not now": the server is shutting down, starting, or in recovery. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03"]);
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

/** What every door (REST's 503, an MCP tool's error) says when the registry could not be reached. */
export const REGISTRY_UNREACHABLE =
  "the registry (PostgreSQL at CORRAL_DATABASE_URL) cannot be reached; try again once it is back (Corral reconnects on its own)";

/**
 * Whether a registry call failed because a networked registry (PostgreSQL) could not be reached,
 * rather than because of what was asked: the same call can succeed once it is back. Drizzle wraps
 * the driver's error as its cause.
 */
export function registryUnreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? "");
    if (code.startsWith("08") || UNAVAILABLE_STATES.has(code) || NETWORK_CODES.has(code)) return true;
    // node-postgres ends a query whose connection went away with these, without a code.
    if (e instanceof Error && /^Connection terminated|^Client has encountered a connection error/.test(e.message)) return true;
  }
  return false;
}
