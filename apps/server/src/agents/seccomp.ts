// The seccomp filter bubblewrap loads into a sandboxed worker (`--seccomp FD`): a classic BPF
// program over `struct seccomp_data` (linux/seccomp.h), as libseccomp's seccomp_export_bpf writes
// one. It takes away what a read-only file system does not: connecting to the host's Unix sockets
// (a PostgreSQL or Docker socket, the user's D-Bus and ssh-agent), which needs only a socket.

/** Per architecture: its audit id (linux/audit.h) and the syscall numbers the filter refuses. */
interface Arch {
  audit: number;
  socket: number;
  socketpair: number;
  ioUringSetup: number;
  /** x86_64's x32 ABI: the same arch id, syscall numbers with this bit set. */
  x32Bit?: number;
}

const ARCHES: Partial<Record<NodeJS.Architecture, Arch>> = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, ioUringSetup: 425, x32Bit: 0x40000000 },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, ioUringSetup: 425 },
};

// BPF opcodes (linux/bpf_common.h) and seccomp actions (linux/seccomp.h).
const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const EAFNOSUPPORT = 97;
const ENOSYS = 38;
const ESOCKTNOSUPPORT = 94;
const AF_UNIX = 1;
// A socket's type (linux/net.h), below its SOCK_CLOEXEC and SOCK_NONBLOCK flags.
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;

// Offsets in struct seccomp_data: nr, arch, then instruction_pointer and args[6] (u64 each).
const NR = 0;
const ARCH = 4;
/** The low half of args[0] on these little-endian machines: socket()'s family is an int. */
const ARG0_LOW = 16;
/** The low half of args[1]: socketpair()'s type. */
const ARG1_LOW = 24;

/**
 * The program's end: one return per action. A jump names the return it goes to, or a later step's
 * label; else it falls through.
 */
const RETURNS = {
  allow: RET_ALLOW,
  afnosupport: RET_ERRNO | EAFNOSUPPORT,
  socktnosupport: RET_ERRNO | ESOCKTNOSUPPORT,
  enosys: RET_ERRNO | ENOSYS,
  kill: RET_KILL_PROCESS,
};
type Outcome = keyof typeof RETURNS;
interface Step {
  code: number;
  k: number;
  label?: string;
  jt?: Outcome | `@${string}`;
  jf?: Outcome | `@${string}`;
}

function assemble(steps: Step[]): Buffer {
  const outcomes = Object.keys(RETURNS) as Outcome[];
  const at = (i: number, to: Step["jt"]) => {
    if (to === undefined) return 0;
    const target = to.startsWith("@") ? steps.findIndex((s) => s.label === to.slice(1)) : steps.length + outcomes.indexOf(to as Outcome);
    if (target <= i) throw new Error(`seccomp program: jump from step ${i} to ${to} does not go forward`);
    return target - i - 1;
  };
  const instructions = [
    ...steps.map((step, i) => ({ code: step.code, jt: at(i, step.jt), jf: at(i, step.jf), k: step.k })),
    ...outcomes.map((outcome) => ({ code: RET_K, jt: 0, jf: 0, k: RETURNS[outcome] })),
  ];
  const program = Buffer.alloc(instructions.length * 8);
  instructions.forEach(({ code, jt, jf, k }, i) => {
    program.writeUInt16LE(code, i * 8);
    program.writeUInt8(jt, i * 8 + 2);
    program.writeUInt8(jf, i * 8 + 3);
    program.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return program;
}

/** Why this machine gets no filter, or null: it is written for x86_64 and aarch64 only. */
export function seccompUnsupported(arch: NodeJS.Architecture = process.arch): string | null {
  return ARCHES[arch] ? null : `the sandbox's seccomp filter (no Unix sockets) is written for x86_64 and aarch64, and this server runs on ${arch}`;
}

/**
 * The program: a syscall of another ABI (32-bit code on a 64-bit kernel, whose socketcall would
 * get past the checks below) kills the process; `socket(AF_UNIX, …)` fails with EAFNOSUPPORT, as
 * on a kernel without Unix sockets; `io_uring_setup` fails with ENOSYS, as on a kernel without
 * io_uring (its requests open sockets without a syscall the filter sees; programs fall back).
 * socketpair(AF_UNIX) makes stream and seqpacket pairs only, which join two ends of the worker's
 * own for good (connect() on them is EISCONN; libuv's child stdio is one); a datagram end (or a
 * SOCK_RAW one, which the kernel makes a datagram) could be aimed by sendto() or connect() at any
 * datagram socket of the host, so it fails with ESOCKTNOSUPPORT.
 * Everything else is allowed: other families (TCP for a CLI's API calls) are the network namespace's business.
 */
export function seccompProgram(arch: NodeJS.Architecture = process.arch): Buffer {
  const a = ARCHES[arch];
  if (!a) throw new Error(seccompUnsupported(arch) ?? arch);
  return assemble([
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: a.audit, jf: "kill" },
    { code: LD_W_ABS, k: NR },
    ...(a.x32Bit === undefined ? [] : [{ code: JGE_K, k: a.x32Bit, jt: "enosys" as const }]),
    { code: JEQ_K, k: a.ioUringSetup, jt: "enosys" },
    { code: JEQ_K, k: a.socketpair, jf: "@socket" },
    { code: LD_W_ABS, k: ARG0_LOW },
    { code: JEQ_K, k: AF_UNIX, jf: "allow" },
    { code: LD_W_ABS, k: ARG1_LOW },
    { code: AND_K, k: SOCK_TYPE_MASK },
    { code: JEQ_K, k: SOCK_STREAM, jt: "allow" },
    { code: JEQ_K, k: SOCK_SEQPACKET, jt: "allow", jf: "socktnosupport" },
    { label: "socket", code: JEQ_K, k: a.socket, jf: "allow" },
    { code: LD_W_ABS, k: ARG0_LOW },
    { code: JEQ_K, k: AF_UNIX, jt: "afnosupport", jf: "allow" },
  ]);
}
