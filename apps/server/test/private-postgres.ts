// A private PostgreSQL (Debian's binaries, a fresh cluster in a temp dir, a free port, trust auth
// on 127.0.0.1 only, durability off): the test run's (postgres-server.ts) and the PostgreSQL
// benchmark's.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const SUPERUSER = "corral_test";
const INSTALL_HINT = "install it with `apt-get install -y postgresql`";

/** Debian keeps the server's binaries out of PATH, in /usr/lib/postgresql/<major>/bin. */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const major of majors) {
    const dir = path.join(root, major, "bin");
    if (existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "postgres"))) return dir;
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: there, its processes run as the `postgres` user the package created. */
function serverUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  return { uid: id("-u"), gid: id("-g") };
}

async function ready(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PostgreSQL exited (${child.exitCode}) while starting:\n${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    // The port opens before the server accepts logins; pg_isready says when it does.
    if (up && spawnSync(path.join(postgresBin() ?? "", "pg_isready"), ["-h", "127.0.0.1", "-p", String(port)]).status === 0) return;
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not start within 30 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A private PostgreSQL (its admin URL and how to stop it), or why there is none. */
export async function startPrivatePostgres(): Promise<{ url: string; stop: () => Promise<void> } | { missing: string }> {
  const bin = postgresBin();
  if (!bin) {
    return { missing: `PostgreSQL is not installed (${INSTALL_HINT})` };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "corral-pg-"));
  const data = path.join(dir, "data");
  const user = serverUser();
  if ("uid" in user) chownSync(dir, user.uid, user.gid);
  const init = spawnSync(path.join(bin, "initdb"), ["-D", data, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"], {
    encoding: "utf8",
    ...user,
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout || init.error?.message}`);
  const port = await freePort();
  // Durability settings off: a test cluster is thrown away, and fsync per commit would make every test slower.
  const args = [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=300",
  ];
  const child = spawn(path.join(bin, "postgres"), args, { stdio: ["ignore", "ignore", "pipe"], ...user });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  await ready(port, child, () => stderr);
  const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    // SIGINT: PostgreSQL's fast shutdown (ends sessions, no waiting for clients).
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, stop };
}
