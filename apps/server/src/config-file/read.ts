import { closeSync, constants } from "node:fs";
import type { ConfigFileError } from "@corral/shared";
import { ServiceError } from "../lib/errors.js";
import { openRegularFile, readAt } from "../lib/regular-file.js";

/** Far more than any set of agents needs; a bigger file is refused before it is parsed. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** A config file that cannot be used, with where it is wrong. */
export class ConfigFileRefusal extends Error {
  constructor(readonly detail: ConfigFileError) {
    super(detail.line === null ? detail.message : `line ${detail.line}, column ${detail.column}: ${detail.message}`);
  }
}

export const refusal = (message: string, field: string | null = null, line: number | null = null, column: number | null = null) =>
  new ConfigFileRefusal({ message, field, line, column });

/**
 * The file's text, or null when there is none. Opened as the file API opens files: a link or a
 * FIFO at the path is refused rather than followed or waited on, and only MAX_CONFIG_BYTES are read.
 */
export function readConfigText(file: string): string | null {
  let opened: ReturnType<typeof openRegularFile>;
  try {
    opened = openRegularFile(file, constants.O_RDONLY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw refusal(`${file} is a symbolic link; point CORRAL_CONFIG at the file itself`);
    if (err instanceof ServiceError) throw refusal(err.message);
    throw refusal(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    if (opened.stat.size > MAX_CONFIG_BYTES)
      throw refusal(`${file} is ${opened.stat.size} bytes; a config file may have at most ${MAX_CONFIG_BYTES}`);
    // One byte more than allowed shows a file that grew since fstat.
    const bytes = readAt(opened.fd, 0, MAX_CONFIG_BYTES + 1);
    if (bytes.length > MAX_CONFIG_BYTES) throw refusal(`${file} has more than ${MAX_CONFIG_BYTES} bytes`);
    return bytes.toString("utf8");
  } finally {
    closeSync(opened.fd);
  }
}
