// The real OpenCode as a running server (`opencode serve`), for the suites that talk to one.
import { type ChildProcess, spawn } from "node:child_process";
import { cleanEnv, clientBin } from "./clients.js";

/** `opencode serve --port 0` in `cwd` (a password in `env` as OPENCODE_SERVER_PASSWORD); resolves with its address once it prints it. */
export function serveOpencode(home: string, cwd: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(clientBin("opencode"), ["serve", "--port", "0"], {
    cwd,
    env: cleanEnv(home, env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let printed = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`opencode serve did not start:\n${printed}`)), 60_000);
    const read = (data: Buffer) => {
      printed += data.toString();
      const url = /listening on (http:\/\/[^\s]+)/.exec(printed)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url, child });
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`opencode serve exited (${code}):\n${printed}`)));
  });
}
