import { binaryName } from "../agents/availability.js";
import { cliAdapterFor } from "../agents/kind-lookup.js";
import { workerEnv } from "../agents/worker-env.js";
import type { CliAdapter, Invocation, JobSpec } from "../agents/types.js";
import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import { badInput } from "../lib/errors.js";

/** Linux's MAX_ARG_STRLEN: execve refuses (E2BIG) any one argument longer than this, its NUL included. */
export const MAX_ARG_BYTES = 128 * 1024;
/**
 * Corral's share of ARG_MAX for a worker's arguments and environment together. ARG_MAX is a
 * quarter of the stack limit (2 MiB with the usual 8 MiB stack); half of that leaves room for
 * the pointers execve also counts, the sandbox's and the wrapper's own arguments, and smaller stacks.
 */
export const MAX_COMMAND_LINE_BYTES = 1024 * 1024;

const KIB = 1024;
const strBytes = (s: string) => Buffer.byteLength(s) + 1;
const envBytes = (env: Record<string, string>) => Object.entries(env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + strBytes(v) + 1, 0);

interface Size {
  total: number;
  /** Bytes of each argument (command first), NUL included. */
  args: number[];
  /** Whether each argument carries the prompt; unknown when absent. */
  withPrompt?: boolean[];
}

function sizeOf(invocation: Invocation, env: Record<string, string>): Size {
  const args = [invocation.command, ...invocation.args].map(strBytes);
  return { total: args.reduce((a, b) => a + b, 0) + envBytes({ ...env, ...invocation.env }), args };
}

type Field = "prompt" | "workdir" | "model";

/**
 * The command line's size for the real spec, computed from tiny stand-ins rather than built: an
 * argument template may repeat `{prompt}` thousands of times, and building that string is what
 * would exhaust memory. Adapters substitute values verbatim, so the size grows by each value's
 * length times the number of places it appears — measured by lengthening one stand-in at a time.
 */
function predictedSize(adapter: CliAdapter, spec: JobSpec, binary: string, env: Record<string, string>): Size & { prompts: number } {
  const standIn: Record<Field, string | null> = { prompt: "x", workdir: "/x", model: spec.model === null ? null : "x" };
  const probe = (values: Record<Field, string | null>) =>
    sizeOf(adapter.invocation({ ...spec, prompt: values.prompt ?? "", workdir: values.workdir ?? "", model: values.model }, binary), env);
  const base = probe(standIn);
  const predicted: Size & { prompts: number } = { total: base.total, args: [...base.args], prompts: 0 };
  for (const field of ["prompt", "workdir", "model"] as const) {
    const short = standIn[field];
    const value = spec[field];
    if (short === null || value === null) continue;
    const longer = probe({ ...standIn, [field]: `${short}x` });
    const growth = Buffer.byteLength(value) - Buffer.byteLength(short);
    predicted.total += (longer.total - base.total) * growth;
    if (field === "prompt") {
      predicted.prompts = longer.total - base.total;
      if (longer.args.length === base.args.length) predicted.withPrompt = longer.args.map((n, i) => n !== base.args[i]);
    }
    // An adapter whose arguments' count depends on a value cannot be predicted per argument; the total still holds.
    if (longer.args.length !== base.args.length) continue;
    longer.args.forEach((n, i) => {
      predicted.args[i] = (predicted.args[i] ?? 0) + (n - (base.args[i] ?? 0)) * growth;
    });
  }
  return predicted;
}

/** The refusal, naming the prompt when one copy of it is already too much, else the agent's argument template. */
function refuse(spec: JobSpec, size: Size & { prompts: number }): never {
  const promptBytes = Buffer.byteLength(spec.prompt);
  const longest = size.args.reduce((max, n) => Math.max(max, n), 0);
  const what =
    size.total > MAX_COMMAND_LINE_BYTES
      ? `its arguments and environment would take ${size.total} bytes, over Corral's limit of ${MAX_COMMAND_LINE_BYTES / KIB / KIB} MiB for a worker's command line`
      : `one of its arguments would be ${longest} bytes, over Linux's limit of ${MAX_ARG_BYTES / KIB} KiB per argument (MAX_ARG_STRLEN)`;
  const agent = spec.agent.name;
  const withOneCopy = size.total - (size.prompts - 1) * promptBytes;
  if (size.prompts > 1 && promptBytes < MAX_ARG_BYTES && withOneCopy <= MAX_COMMAND_LINE_BYTES) {
    throw badInput(
      `agent ${agent} cannot take this prompt: its args put the prompt (${promptBytes} bytes) on the command line ${size.prompts} times, and ${what}; use {prompt} once in the agent's args, or shorten the prompt`,
      "args",
    );
  }
  // An argument over the limit that does not carry the prompt is the agent's own (a claude agent's role is one argument).
  const ownTooLong = size.args.some((n, i) => n > MAX_ARG_BYTES && size.withPrompt?.[i] === false);
  if (size.prompts === 0 || (ownTooLong && size.total <= MAX_COMMAND_LINE_BYTES)) {
    throw badInput(`agent ${agent} cannot be run: ${what}; shorten its settings (role, args or env)`, size.prompts === 0 ? "args" : "agent");
  }
  throw badInput(`the prompt is ${promptBytes} bytes and agent ${agent} passes it on the command line: ${what}; shorten the prompt`, "prompt");
}

const fits = (size: Size) => size.total <= MAX_COMMAND_LINE_BYTES && size.args.every((n) => n <= MAX_ARG_BYTES);

/** The adapter's invocation for this job, built only once its size is known to fit the limits above. */
export function boundedInvocation(adapter: CliAdapter, spec: JobSpec, binary: string, env: Record<string, string>): Invocation {
  const predicted = predictedSize(adapter, spec, binary, env);
  if (!fits(predicted)) refuse(spec, predicted);
  const invocation = adapter.invocation(spec, binary);
  // The prompt, model and workdir are refused with a NUL byte where they come in; the agent's settings (a role, an argument) are checked here.
  const withNul = invocation.args.find((arg) => arg.includes("\0"));
  if (withNul !== undefined) {
    throw badInput(
      `agent ${spec.agent.name} cannot be run: its argument ${JSON.stringify(withNul.slice(0, 40))}… holds a NUL byte, which no program can be given; remove it from the agent's settings`,
      "agent",
    );
  }
  assertCommandLineFits(invocation, env, spec);
  return invocation;
}

/** The exact check of what will be spawned (after the sandbox wrapped it). */
export function assertCommandLineFits(invocation: Invocation, env: Record<string, string>, spec: JobSpec): void {
  const size = sizeOf(invocation, env);
  const prompts = invocation.args.filter((arg) => arg.includes(spec.prompt)).length;
  if (!fits(size)) refuse(spec, { ...size, prompts });
}

/** At launch, before the job exists: refuses a job whose command line could never be started. */
export function assertLaunchFits(agent: AgentRow, job: Omit<JobSpec, "jobId" | "agent">, config: AppConfig): void {
  const adapter = cliAdapterFor(agent.kind);
  if (!adapter) return; // in-process agents have no command line
  const spec: JobSpec = { ...job, jobId: "000000000000", agent };
  boundedInvocation(adapter, spec, binaryName(agent, config), workerEnv(agent, config, job.model));
}
