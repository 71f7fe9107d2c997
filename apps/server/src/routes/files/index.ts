import { closeSync, createReadStream } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import {
  DirListingSchema,
  FileRawQuerySchema,
  FileReadQuerySchema,
  FileReadSchema,
  JobFilesSchema,
  JobIdSchema,
  WorkdirListSchema,
  WorkdirPathQuerySchema,
  type ApiError,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { FRAME_POLICY } from "../../security/headers.js";
import type { Services } from "../../services.js";
import { errors } from "../contracts.js";
import { sniffBinary } from "../../lib/regular-file.js";
import { parseRange } from "../../lib/byte-range.js";

const IdParamsSchema = z.object({ id: JobIdSchema });
const tags = ["files"];

/** A file's bytes: text as text, anything else as an octet stream. */
const fileBytes = (description: string) => ({
  description,
  content: { "text/plain": { schema: z.string() }, "application/octet-stream": { schema: z.string() } },
});

/** What each job changed, and browsing of workdirs (only those of known jobs and agents). */
export function fileRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();

    app.get(
      "/api/jobs/:id/files",
      {
        schema: {
          summary: "What the job created, modified and deleted in its workdir",
          tags,
          params: IdParamsSchema,
          response: { 200: JobFilesSchema, ...errors(404) },
        },
      },
      async (request) => {
        const { id } = request.params;
        await services.jobs.get(id);
        return services.files.listed(id);
      },
    );

    app.get(
      "/api/workdirs",
      {
        schema: {
          summary: "The workdirs that can be browsed: those of known jobs and agents, under the allowed roots",
          tags,
          response: { 200: WorkdirListSchema, ...errors() },
        },
      },
      async () => ({ workdirs: await services.workdirs.known() }),
    );

    app.get(
      "/api/workdirs/list",
      {
        schema: {
          summary: "A directory's entries",
          tags,
          querystring: WorkdirPathQuerySchema,
          response: { 200: DirListingSchema, ...errors(404, 503, 504) },
        },
      },
      async (request) => services.workdirs.list(request.query.path),
    );

    app.get(
      "/api/workdirs/read",
      {
        schema: {
          summary: "A window of a file for display: its text, or only the facts when it is binary",
          tags,
          querystring: FileReadQuerySchema,
          response: { 200: FileReadSchema, ...errors(404, 503, 504) },
        },
      },
      async (request) => {
        const { path: requested, offset, limit } = request.query;
        return services.workdirs.read(requested, offset, limit);
      },
    );

    // The file's bytes, with single byte ranges for big files and resumed downloads.
    app.get(
      "/api/workdirs/raw",
      {
        schema: {
          summary:
            "A file's bytes; a single `Range: bytes=` range answers 206. A file on a runner comes at most 8 MiB per request: a longer range answers its first 8 MiB, a bigger file without a range 413",
          tags,
          querystring: FileRawQuerySchema,
          response: {
            200: fileBytes("The whole file"),
            206: fileBytes("The range asked for"),
            ...errors(404, 413, 416, 503, 504),
          },
        },
      },
      async (request, reply) => {
        const { path: requested, download } = request.query;
        const bytes = await services.workdirs.bytes(requested, request.headers.range);
        let file: FileFacts;
        let body: () => unknown;
        if ("remote" in bytes) {
          const { path: real, size, mtime, binary, range, data } = bytes.remote;
          file = { real, size, mtime: new Date(mtime), binary, range };
          body = () => Buffer.from(data, "base64");
        } else {
          const { real, fd, stat } = bytes.local;
          const range = parseRange(request.headers.range, stat.size);
          let binary: boolean;
          try {
            binary = sniffBinary(fd);
          } catch (err) {
            closeSync(fd);
            throw err;
          }
          file = { real, size: stat.size, mtime: stat.mtime, binary, range };
          if (range === "unsatisfiable" || stat.size === 0) {
            closeSync(fd);
            body = () => "";
          } else body = () => createReadStream("", { fd, start: range?.start ?? 0, end: range?.end ?? stat.size - 1, autoClose: true });
        }
        return sendFile(reply as FastifyReply, file, download === "1", request.headers.range, body);
      },
    );
  };
}

/** What the raw route says about a file, wherever its bytes come from. */
interface FileFacts {
  real: string;
  size: number;
  mtime: Date;
  binary: boolean;
  range: { start: number; end: number } | null | "unsatisfiable";
}

/** Sends a file's bytes (`body`: a stream, or the buffer a runner sent) with its headers, or the 416 of a range outside it. */
function sendFile(reply: FastifyReply, file: FileFacts, download: boolean, rangeHeader: string | undefined, body: () => unknown) {
  reply.header("accept-ranges", "bytes");
  if (file.range === "unsatisfiable") {
    return reply
      .code(416)
      .header("content-range", `bytes */${file.size}`)
      .send({ error: `range ${rangeHeader} is outside the file (${file.size} bytes)`, code: "invalid_input", field: "range" } satisfies ApiError);
  }
  reply.header("last-modified", file.mtime.toUTCString());
  // Never let a browser run what a worker wrote as a page of this origin.
  reply.header("content-security-policy", `default-src 'none'; sandbox; ${FRAME_POLICY}`);
  reply.header("content-type", file.binary ? "application/octet-stream" : "text/plain; charset=utf-8");
  if (download) reply.header("content-disposition", `attachment; filename*=UTF-8''${encodeURIComponent(path.basename(file.real))}`);
  const start = file.range?.start ?? 0;
  const end = file.range?.end ?? file.size - 1;
  if (file.range) reply.code(206).header("content-range", `bytes ${start}-${end}/${file.size}`);
  reply.header("content-length", String(Math.max(0, end - start + 1)));
  // A stream goes out as it is (a schema types only serialized payloads).
  return reply.send(body());
}
