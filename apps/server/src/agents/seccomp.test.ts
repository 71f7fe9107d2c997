import { spawnSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import { hasTool } from "../../test/required-tool.js";
import { seccompProgram, seccompUnsupported } from "./seccomp.js";

const hasBwrap = hasTool(
  "bwrap",
  ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--", "true"],
  "apt-get install bubblewrap",
);

/** The program's instructions as (code, jt, jf, k). */
function decode(program: Buffer): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (let i = 0; i < program.length; i += 8) out.push([program.readUInt16LE(i), program[i + 2]!, program[i + 3]!, program.readUInt32LE(i + 4)]);
  return out;
}

describe("the sandbox's seccomp program", () => {
  test("is built for x86_64 and aarch64 with each one's numbers, and refused elsewhere by name", () => {
    const x64 = decode(seccompProgram("x64"));
    const arm64 = decode(seccompProgram("arm64"));
    expect(x64[1]?.[3]).toBe(0xc000003e);
    expect(arm64[1]?.[3]).toBe(0xc00000b7);
    expect(x64.map((i) => i[3])).toContain(41); // socket
    expect(arm64.map((i) => i[3])).toContain(198);
    // x32's syscalls share x86_64's arch id: only x86_64 checks their bit.
    expect(x64.some(([code, , , k]) => code === 0x35 && k === 0x40000000)).toBe(true);
    expect(arm64.some(([code]) => code === 0x35)).toBe(false);
    // Every jump lands inside the program.
    for (const program of [x64, arm64]) {
      for (const [i, [code, jt, jf]] of program.entries()) if (code !== 0x06) expect(Math.max(jt, jf) + i + 1).toBeLessThan(program.length);
      expect(program.at(-1)?.[0]).toBe(0x06);
    }
    expect(seccompUnsupported("x64")).toBeNull();
    expect(seccompUnsupported("riscv64")).toMatch(/written for x86_64 and aarch64, and this server runs on riscv64/);
    expect(() => seccompProgram("ia32")).toThrow(/runs on ia32/);
  });

  const hasPython = hasTool("python3", ["-c", "import ctypes"], "apt-get install python3");
  test.skipIf(!hasBwrap || !hasPython)("under bubblewrap: no AF_UNIX socket and no io_uring; socketpair, TCP sockets and the rest work", () => {
    const script = [
      "import ctypes, errno, os, socket",
      "try:\n  socket.socket(socket.AF_UNIX); print('unix: made')\nexcept OSError as e: print('unix:', errno.errorcode[e.errno])",
      "a, b = socket.socketpair(); a.send(b'x'); print('socketpair:', b.recv(1).decode())",
      "socket.socket(socket.AF_INET).close(); print('inet: made')",
      "libc = ctypes.CDLL(None, use_errno=True)",
      "r = libc.syscall(425, 1, ctypes.create_string_buffer(120)); print('io_uring_setup:', errno.errorcode.get(ctypes.get_errno()) if r < 0 else 'made')",
      "print('pid:', os.getpid() > 0)",
    ].join("\n");
    const run = spawnSync(
      "bwrap",
      ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--seccomp", "0", "--", "python3", "-c", script],
      { input: seccompProgram(), encoding: "utf8", timeout: 20_000 },
    );
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("unix: EAFNOSUPPORT\nsocketpair: x\ninet: made\nio_uring_setup: ENOSYS\npid: True\n");
  });
});
