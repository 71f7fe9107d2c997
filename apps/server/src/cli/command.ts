import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError, EXIT } from "./exit-codes.js";
import type { Target } from "./settings.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Options every command takes. */
const COMMON = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

export interface Command<O extends Options = Options> {
  name: string;
  /** One line for `corral --help`. */
  summary: string;
  /** The arguments after the command's name, as `--help` shows them. */
  usage: string;
  /** `--help`'s text after the usage line: what it does, each option, what it prints. */
  help: string;
  options: O;
  /** Fewest and most positionals (the words of a prompt count as one). */
  positionals: { min: number; max: number };
  run(context: Context<O>): Promise<number>;
}

export interface Context<O extends Options> {
  values: ReturnType<typeof parseArgs<{ options: O & typeof COMMON; allowPositionals: true }>>["values"];
  positionals: string[];
  json: boolean;
  /** Resolved on first use: `--help` and usage errors need no server. */
  target(): Target;
}

export const defineCommand = <O extends Options>(command: Command<O>): Command<O> => command;

export function usageLine(command: Pick<Command, "name" | "usage">): string {
  return `corral ${command.name} ${command.usage}`.trimEnd();
}

/**
 * Parses a command's arguments. A word that starts with `-` is an option, as everywhere in a
 * shell; `--` ends the options, so `corral run gemini -- "-x is a flag"` sends `-x is a flag`.
 */
export function parseCommandArgs<O extends Options>(command: Command<O>, args: string[]) {
  try {
    const parsed = parseArgs({ args, options: { ...command.options, ...COMMON }, allowPositionals: true, strict: true });
    return { values: parsed.values as Context<O>["values"], positionals: parsed.positionals };
  } catch (err) {
    throw usageError(command, (err as Error).message);
  }
}

export function usageError(command: Pick<Command, "name" | "usage">, message: string): CliError {
  return new CliError(`${message}\nUsage: ${usageLine(command)}\nSee: corral ${command.name} --help`, EXIT.usage);
}

/** A numeric option, checked here so the message names the option as typed. */
export function numberOption(command: Pick<Command, "name" | "usage">, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw usageError(command, `--${name} must be a number (got ${JSON.stringify(value)})`);
  return n;
}
