import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError, EXIT } from "./exit-codes.js";
import { oneLine } from "./format.js";
import type { Target } from "./settings.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Options every command takes. */
const COMMON = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

/** What names a command in messages. */
export interface CommandName {
  name: string;
  /** The arguments after the command's name, as `--help` shows them. */
  usage: string;
}

export interface CommandSpec<O extends Options> extends CommandName {
  /** One line for `corral --help`. */
  summary: string;
  /** `--help`'s text after the usage line: what it does, each option, what it prints. */
  help: string;
  options: O;
  /** Fewest and most positionals (each word of an unquoted prompt is one). */
  positionals: { min: number; max: number };
  run(context: Context<O>): Promise<number>;
}

export interface Context<O extends Options> {
  values: ReturnType<typeof parseArgs<{ options: O & typeof COMMON; allowPositionals: true }>>["values"];
  positionals: string[];
  json: boolean;
  /** The server, resolved on first use: `--help` and usage errors need none. */
  target(): Target;
  /** The environment corral was started with (main.ts reads it; commands never read process.env). */
  env: NodeJS.ProcessEnv;
}

/** A command as `corral` runs it: its own options parsed and checked before its spec runs. */
export interface Command extends CommandName {
  summary: string;
  execute(args: string[], target: () => Target, env: NodeJS.ProcessEnv): Promise<number>;
}

/**
 * A command from its spec. A word that starts with `-` is an option, as everywhere in a shell;
 * `--` ends the options, so `corral run gemini -- "-x is a flag"` sends `-x is a flag`.
 */
export function defineCommand<O extends Options>(spec: CommandSpec<O>): Command {
  return {
    name: spec.name,
    usage: spec.usage,
    summary: spec.summary,
    async execute(args, target, env) {
      let parsed: { values: Context<O>["values"]; positionals: string[] };
      try {
        parsed = parseArgs({ args, options: { ...spec.options, ...COMMON }, allowPositionals: true, strict: true }) as typeof parsed;
      } catch (err) {
        throw usageError(spec, (err as Error).message);
      }
      const { values, positionals } = parsed;
      const common: { help?: boolean; json?: boolean } = values;
      if (common.help) {
        process.stdout.write(`Usage: ${usageLine(spec)}\n\n${spec.help}\n`);
        return EXIT.succeeded;
      }
      const { min, max } = spec.positionals;
      if (positionals.length < min) throw usageError(spec, "missing arguments");
      if (positionals.length > max) throw usageError(spec, `unexpected argument ${JSON.stringify(oneLine(positionals[max] ?? ""))}`);
      return spec.run({ values, positionals, json: common.json === true, target, env });
    },
  };
}

export function usageLine(command: CommandName): string {
  return `corral ${command.name} ${command.usage}`.trimEnd();
}

export function usageError(command: CommandName, message: string): CliError {
  return new CliError(`${message}\nUsage: ${usageLine(command)}\nSee: corral ${command.name} --help`, EXIT.usage);
}

/** A numeric option, checked here so the message names the option as typed. */
export function numberOption(command: CommandName, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw usageError(command, `--${name} must be a number (got ${JSON.stringify(value)})`);
  return n;
}
