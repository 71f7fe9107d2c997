import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import type { Tool } from "ollama";
import { confine, Refusal, writeConfined } from "../../jobs/confined-files.js";

/** A file read back to the model is cut here: a small model's context is the scarce resource. */
const MAX_READ_CHARS = 64 * 1024;
const MAX_LIST_ENTRIES = 500;
const MAX_WRITE_CHARS = 4 * 1024 * 1024;

export const fileTools: Tool[] = [
  {
    type: "function",
    function: {
      name: "write_file",
      description: "Create or overwrite a file in the working directory. Parent directories are created.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "Path relative to the working directory, e.g. notes/summary.md" },
          content: { type: "string", description: "The full content of the file" },
        },
        required: ["path", "content"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a text file from the working directory.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "Path relative to the working directory" } },
        required: ["path"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "list_files",
      description: "List files and directories in the working directory or one of its subdirectories.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "Directory relative to the working directory; default: the working directory itself" } },
        required: [],
      },
    },
  },
];

export interface ToolOutcome {
  ok: boolean;
  /** Sent back to the model as the tool message. */
  text: string;
  /** A file the tool wrote, relative to the workdir. */
  wrote?: string;
}

function stringArg(args: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) {
    if (required) throw new Refusal(`missing argument "${name}"`);
    return undefined;
  }
  if (typeof value !== "string") throw new Refusal(`argument "${name}" must be a string`);
  return value;
}

function describeEntry(entry: Dirent): string {
  return entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name;
}

/** Runs one tool call; every failure becomes a tool error the model can read and recover from. */
export async function runFileTool(workdir: string, name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
  try {
    switch (name) {
      case "write_file": {
        const file = stringArg(args, "path", true) as string;
        const content = stringArg(args, "content", true) as string;
        if (content.length > MAX_WRITE_CHARS) throw new Refusal(`content is larger than ${MAX_WRITE_CHARS} characters`);
        const wrote = await writeConfined(workdir, file, content);
        return { ok: true, text: `wrote ${Buffer.byteLength(content)} bytes to ${wrote}`, wrote };
      }
      case "read_file": {
        const file = await confine(workdir, stringArg(args, "path", true) as string);
        const text = await readFile(file, "utf8");
        return { ok: true, text: text.length > MAX_READ_CHARS ? `${text.slice(0, MAX_READ_CHARS)}\n[…truncated at ${MAX_READ_CHARS} characters]` : text };
      }
      case "list_files": {
        const dir = await confine(workdir, stringArg(args, "path", false) || ".");
        const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
        const shown = entries.slice(0, MAX_LIST_ENTRIES).map(describeEntry);
        if (entries.length > shown.length) shown.push(`[…${entries.length - shown.length} more]`);
        return { ok: true, text: shown.join("\n") || "(empty)" };
      }
      default:
        return { ok: false, text: `error: unknown tool ${name}; the tools are write_file, read_file and list_files` };
    }
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, text: `error: refused: ${err.message}` };
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { ok: false, text: "error: refused: the path is a symlink" };
    if (code === "ENOENT") return { ok: false, text: "error: no such file or directory" };
    if (code === "EISDIR") return { ok: false, text: "error: that is a directory; use list_files" };
    if (code === "ENOTDIR") return { ok: false, text: "error: not a directory" };
    return { ok: false, text: `error: ${err instanceof Error ? err.message : String(err)}` };
  }
}
