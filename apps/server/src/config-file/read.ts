import { closeSync, constants } from "node:fs";
import type { ConfigFileError } from "@corral/shared";
import { ServiceError } from "../lib/errors.js";
import { openRegularFile, readAt } from "../lib/regular-file.js";

/** Far more than any set of agents needs; a bigger file is refused before it is parsed. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** At most this many of a file's errors are reported; a file with more is likely not a config file. */
export const MAX_REPORTED_ERRORS = 50;
/** Errors looked for before the check stops: the report's first ones in the file's order are among them. */
export const MAX_GATHERED_ERRORS = 1000;
/** The longest message or field an error keeps: they echo the file's keys and values, which may be as long as the file. */
const MAX_ERROR_TEXT = 1000;
const clipped = (text: string) => (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text);

/** A config file that cannot be used, with everything wrong in it and where. */
export class ConfigFileRefusal extends Error {
  readonly errors: ConfigFileError[];
  constructor(errors: ConfigFileError[]) {
    // In the file's order, as an editor shows it.
    const ordered = [...errors].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0)).slice(0, MAX_REPORTED_ERRORS);
    super(ordered.map(describeConfigError).join("; "));
    this.errors = ordered;
  }
}

/** One error as a line of text: where, then what. */
export const describeConfigError = (e: ConfigFileError) =>
  `${e.line === null ? "" : `line ${e.line}, column ${e.column}: `}${e.field ? `${e.field}: ` : ""}${e.message}`;

export const configError = (
  message: string,
  field: string | null = null,
  line: number | null = null,
  column: number | null = null,
): ConfigFileError => ({
  message: clipped(message),
  field: field === null ? null : clipped(field),
  line,
  column,
});

export const refusal = (message: string, field: string | null = null, line: number | null = null, column: number | null = null) =>
  new ConfigFileRefusal([configError(message, field, line, column)]);

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
