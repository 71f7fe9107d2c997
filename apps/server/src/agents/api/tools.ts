import { type AgentTool, DEFAULT_AGENT_TOOLS } from "@corral/shared";
import { jsonSchema, type ToolSet, tool } from "ai";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import { Refusal } from "../../lib/confined-files.js";
import type { SandboxGit } from "../../worktrees/sandbox-commits.js";
import { fileTools, type FileToolName, runFileTool } from "../tools/file-tools.js";
import { runBash } from "./bash.js";
import { httpGet } from "./http-get.js";
import { globFiles, grepFiles } from "../tools/search.js";

type Args = Record<string, unknown>;
type Schema = Parameters<typeof jsonSchema>[0];

export interface ToolContext {
  agent: AgentRow;
  config: AppConfig;
  workdir: string;
  /** A worktree job's git folder in the sandbox, for bash (worktrees/sandbox-commits.ts). */
  sandboxGit?: SandboxGit;
  signal: AbortSignal;
  /** A file write_file wrote, relative to the workdir. */
  wrote(file: string): void;
}

interface ToolDef {
  description: string;
  parameters: Schema;
  run(args: Args, ctx: ToolContext): Promise<string>;
}

const str = (args: Args, name: string): string | undefined => {
  const value = args[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new Refusal(`argument "${name}" must be a string`);
  return value;
};
const required = (args: Args, name: string): string => {
  const value = str(args, name);
  if (value === undefined) throw new Refusal(`missing argument "${name}"`);
  return value;
};

/** The workdir's file tools the Ollama loop gives too, the same schemas and code: one set of confined file tools. */
function fileTool(name: FileToolName): ToolDef {
  const def = fileTools.find((t) => t.name === name);
  if (!def) throw new Error(`no file tool ${name}`);
  return {
    description: def.description,
    parameters: def.parameters,
    async run(args, ctx) {
      const outcome = await runFileTool(ctx.workdir, name, args);
      if (outcome.wrote) ctx.wrote(outcome.wrote);
      return outcome.text;
    },
  };
}

const DEFS: Record<AgentTool, ToolDef> = {
  read_file: fileTool("read_file"),
  write_file: fileTool("write_file"),
  list_files: fileTool("list_files"),
  glob: {
    description: "Find files in the working directory whose path matches a glob (*, **, ?, {a,b}), e.g. src/**/*.ts.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Glob over paths relative to the working directory" },
        path: { type: "string", description: "Directory to search under; default: the working directory" },
      },
      required: ["pattern"],
    },
    run: (args, ctx) => globFiles(ctx.workdir, required(args, "pattern"), str(args, "path")),
  },
  grep: {
    description: "Search the text files of the working directory for lines matching a regular expression; answers path:line: text.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "A JavaScript regular expression" },
        path: { type: "string", description: "File or directory to search; default: the working directory" },
        include: { type: "string", description: "Only files whose path or name matches this glob, e.g. *.md" },
      },
      required: ["pattern"],
    },
    run: (args, ctx) =>
      grepFiles(ctx.workdir, required(args, "pattern"), { under: str(args, "path"), include: str(args, "include"), signal: ctx.signal }),
  },
  bash: {
    description:
      "Run a bash command in a sandbox: the working directory is writable, the rest of the system read-only, no network. Answers its output and exit status.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The command line, run with bash -c in the working directory" } },
      required: ["command"],
    },
    run: (args, ctx) => runBash(required(args, "command"), ctx),
  },
  http_get: {
    description:
      "GET a web page or API over http(s); only hosts the user allowed can be reached. Answers the status, type and body (cut at 256 KiB).",
    parameters: {
      type: "object",
      properties: { url: { type: "string", description: "The absolute URL" } },
      required: ["url"],
    },
    run: (args, ctx) => httpGet(required(args, "url"), ctx.agent.allowedHosts ?? [], ctx.signal),
  },
};

/** What the model reads when a call fails: it can recover, and the loop goes on. */
function failure(err: unknown): string {
  if (err instanceof Refusal) return `error: refused: ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** The agent's tools for the AI SDK; each answers text, a refusal or failure included. */
export function apiToolSet(ctx: ToolContext): ToolSet {
  const names = ctx.agent.tools ?? DEFAULT_AGENT_TOOLS;
  return Object.fromEntries(
    names.map((name) => {
      const def = DEFS[name];
      return [
        name,
        tool<Args, string>({
          description: def.description,
          inputSchema: jsonSchema<Args>(def.parameters),
          execute: async (args) => {
            try {
              return await def.run(args, ctx);
            } catch (err) {
              return failure(err);
            }
          },
        }),
      ];
    }),
  );
}
