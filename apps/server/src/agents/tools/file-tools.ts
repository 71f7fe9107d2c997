import { closeSync, type Dirent } from "node:fs";
import { readEntries, Refusal, withWorkdir, writeConfined } from "../../lib/confined-files.js";
import { ServiceError } from "../../lib/errors.js";
import { readWindow } from "../../lib/regular-file.js";

/**
 * One read_file answer holds at most this much of a file, read from disk and no more: a small
 * model's context is the scarce resource, and a huge file must not land in the server's memory.
 */
export const MAX_READ_BYTES = 64 * 1024;
/** A listing stops reading the directory here, however many entries it has. */
export const MAX_LIST_ENTRIES = 500;
const MAX_WRITE_CHARS = 4 * 1024 * 1024;

/** A tool as a model is told of it: its name, what it does, and its arguments as JSON Schema. */
export interface FileToolDefinition {
  name: FileToolName;
  description: string;
  parameters: {
    type: "object";
    properties: Record<string, { type: "string" | "integer"; description: string }>;
    required: string[];
  };
}

export type FileToolName = "write_file" | "read_file" | "list_files";

/**
 * The workdir's file tools, as every in-process kind gives them to its model (the Ollama loop
 * and API agents wrap these definitions in their client's tool shape); `runFileTool` runs them.
 */
export const fileTools: FileToolDefinition[] = [
  {
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
  {
    name: "read_file",
    description: `Read a text file from the working directory, at most ${MAX_READ_BYTES / 1024} KiB per call. A longer file ends with a note saying where it was cut; call again with that offset to read on.`,
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the working directory" },
        offset: { type: "integer", description: "Byte to start reading at; default 0 (the start of the file)" },
      },
      required: ["path"],
    },
  },
  {
    name: "list_files",
    description: "List files and directories in the working directory or one of its subdirectories.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory relative to the working directory; default: the working directory itself" } },
      required: [],
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

function offsetArg(args: Record<string, unknown>): number {
  const value = args.offset;
  if (value === undefined || value === null) return 0;
  // Models often send numbers as strings.
  const offset = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
    throw new Refusal('argument "offset" must be a whole number of bytes, 0 or more');
  }
  return offset;
}

/** A window of a text file in the workdir, saying where it was cut when there is more. */
function readText(workdir: string, requested: string, offset: number): ToolOutcome {
  const read = withWorkdir(workdir, (wd) => {
    const file = wd.openFile(requested);
    try {
      return readWindow(file, file.rel, offset, MAX_READ_BYTES);
    } finally {
      closeSync(file.fd);
    }
  });
  if (read.binary) return { ok: false, text: `error: ${requested} is a binary file (${read.size} bytes); read_file reads text files` };
  const end = read.offset + read.length;
  if (end < read.size) {
    return { ok: true, text: `${read.text}\n[…cut at byte ${end} of ${read.size}; call read_file with offset ${end} to read on]` };
  }
  if (read.length === 0 && read.offset > 0) return { ok: true, text: `[end of file: ${requested} has ${read.size} bytes]` };
  return { ok: true, text: read.text ?? "" };
}

/** Reads at most MAX_LIST_ENTRIES entries, however big the directory. */
function listEntries(workdir: string, requested: string): string {
  const { entries, more } = withWorkdir(workdir, (wd) => {
    const dir = wd.openDir(requested);
    try {
      return readEntries(dir.fd, MAX_LIST_ENTRIES);
    } finally {
      closeSync(dir.fd);
    }
  });
  const shown = entries.sort((a, b) => a.name.localeCompare(b.name)).map(describeEntry);
  if (more) shown.push(`[…listing stopped at ${MAX_LIST_ENTRIES} entries; there are more: list a subdirectory, or read a file by name]`);
  return shown.join("\n") || "(empty)";
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
        const requested = stringArg(args, "path", true) as string;
        return readText(workdir, requested, offsetArg(args));
      }
      case "list_files":
        return { ok: true, text: listEntries(workdir, stringArg(args, "path", false) || ".") };
      default:
        return { ok: false, text: `error: unknown tool ${name}; the tools are write_file, read_file and list_files` };
    }
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, text: `error: refused: ${err.message}` };
    // Not a regular file (a FIFO, a device) or a directory: said so without ever blocking on it.
    if (err instanceof ServiceError) return { ok: false, text: `error: ${err.message}` };
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { ok: false, text: "error: refused: the path is a symlink" };
    if (code === "ENOENT") return { ok: false, text: "error: no such file or directory" };
    if (code === "EISDIR") return { ok: false, text: "error: that is a directory; use list_files" };
    if (code === "ENOTDIR") return { ok: false, text: "error: not a directory" };
    return { ok: false, text: `error: ${err instanceof Error ? err.message : String(err)}` };
  }
}
