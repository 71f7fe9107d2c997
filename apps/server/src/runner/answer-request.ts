// This runner's side of a browsing request: the answer is what its own WorkdirService gives (its
// roots, the registry's known workdirs, its machine's disk), or that service's refusal, in the
// format the server reads back (workdirs/runner-answers.ts).
import { closeSync } from "node:fs";
import type { RunnerAnswer } from "../db/registry.js";
import type { RunnerRequestRow } from "../db/schema.js";
import { parseRange } from "../lib/byte-range.js";
import { ServiceError } from "../lib/errors.js";
import { readAt, sniffBinary } from "../lib/regular-file.js";
import { type AnswerError, RAW_ANSWER_CAP, type RawAnswer } from "../workdirs/runner-answers.js";
import type { WorkdirService } from "../workdirs/service.js";
import type { WorktreeAnswers } from "./worktree-answers.js";

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

/**
 * What the runner stores for request `row`, answered by its own WorkdirService (its roots, the
 * registry's known workdirs), or for an action on a worktree by its WorktreeAnswers.
 */
export async function answerRequest(
  workdirs: WorkdirService,
  worktrees: WorktreeAnswers,
  row: RunnerRequestRow,
): Promise<Pick<RunnerAnswer, "answer" | "error">> {
  try {
    const answer =
      row.kind === "list"
        ? await workdirs.list(row.path)
        : row.kind === "read"
          ? await workdirs.read(row.path, row.readOffset, row.readLimit)
          : row.kind === "worktree"
            ? await worktrees.answer(row.args)
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
