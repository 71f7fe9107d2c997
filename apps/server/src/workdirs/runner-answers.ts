// What a runner answers to a browsing request (runner_requests), written by the runner and read
// by the server: the same DirListing and FileRead the server's own disk gives, a capped window of
// a file's bytes for raw, or the refusal the server itself would have given. A runner's login
// may write anything there: the server checks each answer's size, shape and schema before it
// believes it.
import { z } from "zod";
import { type ApiErrorCode, ApiErrorCodeSchema, type DirListing, DirListingSchema, type FileRead, FileReadSchema } from "@corral/shared";
import type { RunnerAnswer } from "../db/registry.js";
import type { RunnerRequestKind, RunnerRequestRow } from "../db/schema.js";
import { ServiceError, type Status } from "../lib/errors.js";
import { MAX_ENTRIES } from "./dir-listing.js";
import { MAX_DIFF_BYTES } from "../worktrees/git-worktree.js";

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

/** What each kind of request is answered with. */
export interface AnswerOf {
  list: DirListing;
  read: FileRead;
  raw: RawAnswer;
  /** Checked by its action's schema (review/worktree-git.ts, WORKTREE_ANSWERS) once parsed here. */
  worktree: unknown;
}

const RawAnswerSchema = z.object({
  path: z.string(),
  size: z.number().int().min(0),
  mtime: z.number(),
  binary: z.boolean(),
  range: z.union([z.object({ start: z.number().int().min(0), end: z.number().int().min(-1) }), z.null(), z.literal("unsatisfiable")]),
  data: z.string().max(Math.ceil(RAW_ANSWER_CAP / 3) * 4),
});

const SCHEMAS: { [K in RunnerRequestKind]: z.ZodType<AnswerOf[K]> } = {
  list: DirListingSchema.extend({ entries: DirListingSchema.shape.entries.max(MAX_ENTRIES) }),
  read: FileReadSchema,
  raw: RawAnswerSchema,
  worktree: z.unknown(),
};

const STATUSES = [400, 403, 404, 409, 413, 416, 429, 503, 504] as const satisfies readonly Status[];
const AnswerErrorSchema = z.object({
  status: z.literal(STATUSES),
  code: ApiErrorCodeSchema,
  error: z.string().max(8000),
  field: z.string().max(200).optional(),
});

/** Room in an answer for everything but a file's bytes or text (path, facts, JSON punctuation). */
const SLACK = 64 * 1024;
/** The longest refusal a runner gives (its message names a path). */
const ERROR_CAP = 16 * 1024;

/**
 * The most characters an honest answer of `kind` takes: a listing of MAX_ENTRIES names of up to
 * 255 bytes, each escaped as JSON at worst (6 characters a byte); a read's text as long, escaped;
 * a raw window in base64. The registry caps every answer at 32 MiB (drizzle-pg/0007_runner_identity.sql).
 */
function answerCap(kind: RunnerRequestKind, readLimit: number): number {
  if (kind === "list") return MAX_ENTRIES * (255 * 6 + 128) + SLACK;
  if (kind === "read") return readLimit * 6 + SLACK;
  // A diff cut at MAX_DIFF_BYTES, escaped, with its change (60 stat lines, 20 commits).
  if (kind === "worktree") return MAX_DIFF_BYTES * 6 + SLACK;
  return Math.ceil(RAW_ANSWER_CAP / 3) * 4 + SLACK;
}

/**
 * Whether `json` opens at most `max` objects and arrays (outside strings): told before it is
 * parsed, so a small answer made of millions of `[]` is refused without building them.
 */
function containersAtMost(json: string, max: number): boolean {
  let open = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x5b || c === 0x7b) && ++open > max) return false;
  }
  return true;
}

function parsed<T>(text: string, cap: number, containers: number, schema: z.ZodType<T>, what: string, runner: string): T {
  const refuse = (why: string) => new ServiceError(`runner ${runner} sent ${what} the server does not accept (${why}); see its log`, 503, "path");
  if (text.length > cap) throw refuse(`${text.length} characters, over the ${cap} such an answer may take`);
  if (!containersAtMost(text, containers)) throw refuse(`more than ${containers} objects and arrays`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse("not JSON");
  }
  const checked = schema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw refuse(`${issue?.path.join(".") || "the answer"}: ${issue?.message ?? "invalid"}`);
  }
  return checked.data;
}

/**
 * The server's side: the answer runner `runner` stored for a request of `kind`, or its refusal
 * thrown as the server's own would be. Anything else (too big, too many parts, not the schema)
 * is a 503 naming the runner, never parsed further.
 */
export function readAnswer<K extends RunnerRequestKind>(
  row: Pick<RunnerRequestRow, "answer" | "error" | "readLimit">,
  kind: K,
  runner: string,
): AnswerOf[K] {
  if (row.error !== null) {
    const refusal = parsed(row.error, ERROR_CAP, 1, AnswerErrorSchema, "a refusal", runner);
    throw new ServiceError(refusal.error, refusal.status, refusal.field, undefined, refusal.code);
  }
  // One per entry, the listing and its entries: no answer has more. A worktree answer: the change
  // in the diff, and its commits.
  const containers = kind === "list" ? MAX_ENTRIES + 2 : kind === "worktree" ? 4 : 2;
  return parsed(row.answer ?? "null", answerCap(kind, row.readLimit), containers, SCHEMAS[kind], "an answer", runner);
}
