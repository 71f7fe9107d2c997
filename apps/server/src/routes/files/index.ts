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
import { parseRange } from "./range.js";

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
        return { files: await services.files.list(id) };
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
          response: { 200: DirListingSchema, ...errors(404) },
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
          response: { 200: FileReadSchema, ...errors(404) },
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
          summary: "A file's bytes; a single `Range: bytes=` range answers 206",
          tags,
          querystring: FileRawQuerySchema,
          response: { 200: fileBytes("The whole file"), 206: fileBytes("The range asked for"), ...errors(404, 416) },
        },
      },
      async (request, reply) => {
        const { path: requested, download } = request.query;
        const { real, fd, stat } = await services.workdirs.open(requested);
        const range = parseRange(request.headers.range, stat.size);
        reply.header("accept-ranges", "bytes");
        if (range === "unsatisfiable") {
          closeSync(fd);
          return reply
            .code(416)
            .header("content-range", `bytes */${stat.size}`)
            .send({
              error: `range ${request.headers.range} is outside the file (${stat.size} bytes)`,
              code: "invalid_input",
              field: "range",
            } satisfies ApiError);
        }
        let binary: boolean;
        try {
          binary = sniffBinary(fd);
        } catch (err) {
          closeSync(fd);
          throw err;
        }
        reply.header("last-modified", stat.mtime.toUTCString());
        // Never let a browser run what a worker wrote as a page of this origin.
        reply.header("content-security-policy", `default-src 'none'; sandbox; ${FRAME_POLICY}`);
        reply.header("content-type", binary ? "application/octet-stream" : "text/plain; charset=utf-8");
        if (download === "1") reply.header("content-disposition", `attachment; filename*=UTF-8''${encodeURIComponent(path.basename(real))}`);
        const start = range?.start ?? 0;
        const end = range?.end ?? stat.size - 1;
        if (range) reply.code(206).header("content-range", `bytes ${start}-${end}/${stat.size}`);
        reply.header("content-length", String(Math.max(0, end - start + 1)));
        if (stat.size === 0) {
          closeSync(fd);
          return reply.send("");
        }
        // A stream goes out as it is (a schema types only serialized payloads).
        return (reply as FastifyReply).send(createReadStream("", { fd, start, end, autoClose: true }));
      },
    );
  };
}
