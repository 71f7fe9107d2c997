import { z } from "zod";

/** An absolute path inside a known workdir (`~` allowed). `..` segments are refused outright. */
export const WorkdirPathSchema = z
  .string()
  .min(1, "give a path")
  .max(4096)
  .refine((p) => !p.includes("\0"), "the path contains a NUL byte")
  .refine((p) => !p.split(/[\\/]/).includes(".."), "`..` is not allowed; give the path without it");

export const WorkdirPathQuerySchema = z.object({ path: WorkdirPathSchema }).strict();
export type WorkdirPathQuery = z.infer<typeof WorkdirPathQuerySchema>;

export const DirEntryTypeSchema = z.enum(["file", "dir", "symlink", "other"]);
export type DirEntryType = z.infer<typeof DirEntryTypeSchema>;

export const DirEntrySchema = z.object({
  name: z.string(),
  type: DirEntryTypeSchema,
  /** Bytes for files; null for anything else. */
  size: z.number().int().nullable(),
  mtime: z.number(),
});
export type DirEntry = z.infer<typeof DirEntrySchema>;

export const DirListingSchema = z.object({
  /** The real path listed. */
  path: z.string(),
  entries: z.array(DirEntrySchema),
  /** True when the directory had more entries than one answer holds. */
  truncated: z.boolean(),
});
export type DirListing = z.infer<typeof DirListingSchema>;

/**
 * A count of bytes in a query string: digits only, once, so `0x10`, `1e3`, ` 5`, an empty value
 * and a repeated one are refused rather than read as some other number, and a number past `max`
 * is refused with one message.
 */
const bytesFromQuery = (field: string, min: number, max: number) =>
  z
    // Not a string: the parameter came more than once.
    .string({ error: `give the ${field} once, a whole number of bytes written in digits` })
    .regex(/^\d+$/, `the ${field} must be a whole number of bytes, written in digits`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `the ${field} must be at least ${min}`)
        .max(max, `the ${field} must be at most ${max.toLocaleString("en-US")}`),
    );

export const FileReadQuerySchema = z
  .object({
    path: WorkdirPathSchema,
    /** Where the part starts, in bytes; at most the file's size (the server refuses one past its end). */
    offset: bytesFromQuery("offset", 0, Number.MAX_SAFE_INTEGER).default(0),
    /** The part's most bytes; at least 4, one UTF-8 character, so every part but the end moves on. */
    limit: bytesFromQuery("limit", 4, 4 * 1024 * 1024).default(256 * 1024),
  })
  .strict();
export type FileReadQuery = z.infer<typeof FileReadQuerySchema>;

/** A piece of a file for display: text when it is text, else only the facts. */
export const FileReadSchema = z.object({
  path: z.string(),
  size: z.number().int(),
  mtime: z.number(),
  binary: z.boolean(),
  offset: z.number().int(),
  /** Bytes covered by `text` (a cut never splits a UTF-8 character). */
  length: z.number().int(),
  text: z.string().nullable(),
});
export type FileRead = z.infer<typeof FileReadSchema>;

export const WorkdirListSchema = z.object({
  workdirs: z.array(
    z.object({
      path: z.string(),
      agents: z.array(z.string()),
      jobs: z.number().int(),
      /** When the newest job there was added (ms since the epoch); null when no job has used it yet. */
      lastJobAt: z.number().nullable(),
      /** The runner whose machine holds it (its name); absent: the server's machine. */
      runner: z.string().optional(),
    }),
  ),
});
export type WorkdirList = z.infer<typeof WorkdirListSchema>;

export const FileRawQuerySchema = z
  .object({
    path: WorkdirPathSchema,
    /** 1: ask the browser to save it rather than show it. */
    download: z.enum(["0", "1"]).default("0"),
  })
  .strict();
export type FileRawQuery = z.infer<typeof FileRawQuerySchema>;
