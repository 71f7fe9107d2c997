import { closeSync } from "node:fs";
import { Refusal, withWorkdir, writeConfined } from "../../lib/confined-files.js";
import { readWindow } from "../../lib/regular-file.js";

/** A file an ACP agent reads through Corral, at most: its `line`/`limit` window is cut from this. */
export const MAX_ACP_READ_BYTES = 4 * 1024 * 1024;
/** What one `fs/write_text_file` may write. */
export const MAX_ACP_WRITE_CHARS = 4 * 1024 * 1024;

/**
 * `fs/read_text_file`: the file at `path` (absolute, inside the workdir), opened a component at a
 * time without following a link out (lib/confined-files.ts), then cut to `limit` lines from `line`.
 */
export function readTextFile(workdir: string, path: string, line?: number | null, limit?: number | null): string {
  const read = withWorkdir(workdir, (wd) => {
    const file = wd.openFile(path);
    try {
      return readWindow(file, file.rel, 0, MAX_ACP_READ_BYTES);
    } finally {
      closeSync(file.fd);
    }
  });
  if (read.binary) throw new Refusal(`${path} is a binary file (${read.size} bytes)`);
  if (read.size > MAX_ACP_READ_BYTES && !line && !limit) {
    throw new Refusal(`${path} has ${read.size} bytes, more than ${MAX_ACP_READ_BYTES}; read it in windows with line and limit`);
  }
  const text = read.text ?? "";
  if (!line && !limit) return text;
  const lines = text.split("\n");
  const from = Math.max(1, line ?? 1) - 1;
  return lines.slice(from, limit ? from + limit : undefined).join("\n");
}

/** `fs/write_text_file`: written inside the workdir and nowhere else (writeConfined); the workdir-relative path. */
export function writeTextFile(workdir: string, path: string, content: string): Promise<string> {
  if (content.length > MAX_ACP_WRITE_CHARS) throw new Refusal(`content is larger than ${MAX_ACP_WRITE_CHARS} characters`);
  return writeConfined(workdir, path, content);
}
