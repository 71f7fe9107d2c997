// What a runner answers to a browsing request (runner_requests), written by the runner and read
// by the server: the same DirListing and FileRead the server's own disk gives, a capped window of
// a file's bytes for raw, or the refusal the server itself would have given.
import { closeSync } from "node:fs";
import type { ApiErrorCode } from "@corral/shared";
import type { RunnerAnswer } from "../db/repos/runner-requests.js";
import type { RunnerRequestRow } from "../db/schema.js";
import { ServiceError, type Status } from "../lib/errors.js";
import { readAt, sniffBinary } from "../lib/regular-file.js";
import { parseRange } from "../lib/byte-range.js";
import type { WorkdirService } from "./service.js";

/**
 * The most of a file one raw answer carries (8 MiB): it travels as base64 in one row, so every
 * answer stays a bounded size in the registry and in both processes' memory. Bigger files are
 * read a range at a time.
 */
export const RAW_ANSWER_CAP = 8 * 1024 * 1024;

/** A file's bytes as a raw answer holds them; `range` is what parseRange made of the request's Range header. */
export interface RawAnswer {
  path: string;
  size: number;
  mtime: number;
  binary: boolean;
  range: { start: number; end: number } | null | "unsatisfiable";
  /** The bytes from range.start to range.end (the whole file without a range), base64. */
  data: string;
}

/** A refusal as the runner's WorkdirService gave it, to be given again by the server unchanged. */
export interface AnswerError {
  status: Status;
  code: ApiErrorCode;
  error: string;
  field?: string;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) ? 1 : 0)} MiB`;

/** The bytes `range` asks for (all of the file without one), at most RAW_ANSWER_CAP of them. */
async function rawAnswer(workdirs: WorkdirService, requested: string, rangeHeader: string | null): Promise<RawAnswer> {
  const { real, fd, stat } = await workdirs.open(requested);
  try {
    const range = parseRange(rangeHeader ?? undefined, stat.size);
    const binary = sniffBinary(fd);
    const base = { path: real, size: stat.size, mtime: stat.mtimeMs, binary };
    if (range === "unsatisfiable") return { ...base, range, data: "" };
    if (!range && stat.size > RAW_ANSWER_CAP) {
      throw new ServiceError(
        `${requested} is ${mib(stat.size)}; a file on a runner comes at most ${mib(RAW_ANSWER_CAP)} per request: ask for a part with a Range header (bytes=0-${RAW_ANSWER_CAP - 1}, then on), or view it a window at a time`,
        413,
        "path",
      );
    }
    // A range longer than the cap gets its first RAW_ANSWER_CAP bytes: a 206 whose Content-Range says so, as HTTP allows.
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? stat.size - 1, start + RAW_ANSWER_CAP - 1);
    const bytes = end >= start ? readAt(fd, start, end - start + 1) : Buffer.alloc(0);
    return { ...base, range: range ? { start, end: start + bytes.length - 1 } : null, data: bytes.toString("base64") };
  } finally {
    closeSync(fd);
  }
}

/** What the runner stores for request `row`, answered by its own WorkdirService (its roots, the registry's known workdirs). */
export async function answerRequest(workdirs: WorkdirService, row: RunnerRequestRow): Promise<Pick<RunnerAnswer, "answer" | "error">> {
  try {
    const answer =
      row.kind === "list"
        ? await workdirs.list(row.path)
        : row.kind === "read"
          ? await workdirs.read(row.path, row.readOffset, row.readLimit)
          : await rawAnswer(workdirs, row.path, row.range);
    return { answer: JSON.stringify(answer), error: null };
  } catch (err) {
    const refusal: AnswerError =
      err instanceof ServiceError
        ? { status: err.status, code: err.code, error: err.message, ...(err.field ? { field: err.field } : {}) }
        : { status: 503, code: "unavailable", error: `the runner could not read ${row.path}: ${err instanceof Error ? err.message : String(err)}` };
    return { answer: null, error: JSON.stringify(refusal) };
  }
}

/** The server's side: the answer stored for a request, or its refusal thrown as the server's own would be. */
export function readAnswer<T>(row: Pick<RunnerRequestRow, "answer" | "error">): T {
  if (row.error !== null) {
    const refusal = JSON.parse(row.error) as AnswerError;
    throw new ServiceError(refusal.error, refusal.status, refusal.field, undefined, refusal.code);
  }
  return JSON.parse(row.answer ?? "null") as T;
}
