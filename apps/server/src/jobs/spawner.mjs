// Corral's worker spawner: a small, long-lived child of the server that starts workers for it.
// libuv starts a process with fork(), whose cost grows with the parent's memory and blocks its
// event loop (about 4 ms from the server, under 1 ms from here). Node's built-ins only, no bundle,
// so this process stays small; it runs as is from the sources and from a built server.
//
// Over the IPC channel of `child_process.fork`, which frames and parses the messages and tells
// this process when the server is gone:
//   request  { id, file, args, cwd, env, out, err, fd3 }: start `file` with `args`, in its own process
//            group, its stdout and stderr appended to the files `out` and `err` (created owner-only),
//            and when `fd3` (base64) is given, those bytes to read on its fd 3 (bubblewrap's seccomp program);
//   answers  { id, pid, pidStart } once it runs, or { id, error } if it could not be started (the
//            error null when the system gives no reason at once, as for a missing cwd),
//            then { id, exit } with its exit code (null after a signal) once it has ended.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

/** Owner-only, as every file in the data dir (lib/private-files.ts). */
const PRIVATE_FILE_MODE = 0o600;

// The server's channel closing (it stopped, or was killed) ends this process: the workers it
// started are in their own groups and go on; the next server follows them by their exit files.
process.on("disconnect", () => process.exit(0));
// Ctrl-C reaches the terminal's whole process group: the server decides when this process ends.
process.on("SIGINT", () => {});

process.on("message", (request) => {
  const answer = start(request);
  send({ id: request.id, ...answer });
});

function send(message) {
  // A channel that breaks as the server goes (EPIPE) is reported here, not as an 'error' event that
  // would end this process with a stack trace: it is the same as the disconnect above.
  if (process.connected) process.send(message, (err) => err && process.exit(0));
}

function start({ id, file, args, cwd, env, out, err, fd3 }) {
  let outFd;
  let errFd;
  try {
    outFd = openSync(out, "a", PRIVATE_FILE_MODE);
    errFd = openSync(err, "a", PRIVATE_FILE_MODE);
    const stdio = ["ignore", outFd, errFd, ...(fd3 === undefined ? [] : ["pipe"])];
    const child = spawn(file, args, { cwd, env, detached: true, stdio });
    // A failed start (a missing cwd, say) is also told as an error event: without a listener it would end this process.
    child.once("error", () => {});
    // A few hundred bytes: the pipe takes them at once, and they stay readable once this end is
    // closed (no descriptor held per job). A worker gone before reading them breaks it (EPIPE), which is no error here.
    const program = child.stdio[3];
    program?.on("error", () => {});
    program?.end(Buffer.from(fd3 ?? "", "base64"), () => program.destroy());
    if (child.pid === undefined) return { error: null };
    // Read before this loop turns again, so before the worker can be reaped, however short it runs.
    const pidStart = startTicks(child.pid);
    child.once("exit", (code) => send({ id, exit: code }));
    return { pid: child.pid, pidStart };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  } finally {
    if (outFd !== undefined) closeSync(outFd);
    if (errFd !== undefined) closeSync(errFd);
  }
}

/** The kernel's start time of a process (the 22nd field of /proc/<pid>/stat), as process-group.ts reads it. */
function startTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  } catch {
    return null;
  }
}
