import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
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
  test.skipIf(!hasBwrap || !hasPython)("under bubblewrap: no datagram socketpair, whose end could be aimed at a host's datagram socket", () => {
    // Outside: a datagram socket bound in a directory the sandbox sees, as journald's or syslog's.
    // Inside: a socketpair's datagram end needs no socket() call, and sendto/connect retarget it.
    const dir = mkdtempSync(path.join(tmpdir(), "corral-dgram-"));
    const inside = [
      "import errno, socket, sys",
      "for name, kind in (('dgram', socket.SOCK_DGRAM), ('raw', socket.SOCK_RAW)):",
      "  try:",
      "    a, b = socket.socketpair(socket.AF_UNIX, kind | socket.SOCK_CLOEXEC)",
      "    a.sendto(name.encode(), sys.argv[1]); print(name + ': sent')",
      "  except OSError as e: print(name + ':', errno.errorcode[e.errno])",
      "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b'q'); print('seqpacket:', b.recv(1).decode())",
    ].join("\n");
    const outside = [
      "import socket, subprocess, sys",
      "where = sys.argv[1] + '/log.sock'",
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(where); s.setblocking(False)",
      "bwrap = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--seccomp', '0', '--', 'python3', '-c', sys.argv[2], where]",
      "print(subprocess.run(bwrap, input=sys.stdin.buffer.read(), capture_output=True).stdout.decode(), end='')",
      "got = []",
      "while True:\n  try: got.append(s.recv(100).decode())\n  except BlockingIOError: break",
      "print('received:', got)",
    ].join("\n");
    try {
      const run = spawnSync("python3", ["-c", outside, dir, inside], { input: seccompProgram(), encoding: "utf8", timeout: 20_000 });
      expect(run.stderr).toBe("");
      expect(run.stdout).toBe("dgram: ESOCKTNOSUPPORT\nraw: ESOCKTNOSUPPORT\nseqpacket: q\nreceived: []\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
