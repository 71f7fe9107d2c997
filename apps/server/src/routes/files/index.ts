import { closeSync, createReadStream } from "node:fs";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { FileRawQuerySchema, FileReadQuerySchema, JobIdSchema, WorkdirPathQuerySchema, type JobFiles, type WorkdirList } from "@corral/shared";
import { z } from "zod";
import { parseInput } from "../../lib/errors.js";
import { FRAME_POLICY } from "../../security/headers.js";
import type { Services } from "../../services.js";
import { knownWorkdirs, onResolvedPath } from "./access.js";
import { openRegularFile, readWindow, sniffBinary } from "../../lib/regular-file.js";
import { listDir, parseRange } from "./file-io.js";

const IdParamsSchema = z.object({ id: JobIdSchema });

/** What each job changed, and browsing of workdirs (only those of known jobs and agents). */
export function fileRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/api/jobs/:id/files", async (request): Promise<JobFiles> => {
      const { id } = parseInput(IdParamsSchema, request.params);
      services.jobs.get(id);
      return { files: services.files.list(id) };
    });

    app.get("/api/workdirs", async (): Promise<WorkdirList> => ({ workdirs: knownWorkdirs(services) }));

    app.get("/api/workdirs/list", async (request) => {
      const { path: requested } = parseInput(WorkdirPathQuerySchema, request.query);
      return onResolvedPath(services, requested, listDir);
    });

    app.get("/api/workdirs/read", async (request) => {
      const { path: requested, offset, limit } = parseInput(FileReadQuerySchema, request.query);
      return onResolvedPath(services, requested, (real) => readWindow(real, offset, limit));
    });

    // The file's bytes, with single byte ranges for big files and resumed downloads.
    app.get("/api/workdirs/raw", async (request, reply) => {
      const { path: requested, download } = parseInput(FileRawQuerySchema, request.query);
      const { real, fd, stat } = onResolvedPath(services, requested, (resolved) => ({ real: resolved, ...openRegularFile(resolved) }));
      const range = parseRange(request.headers.range, stat.size);
      reply.header("accept-ranges", "bytes");
      if (range === "unsatisfiable") {
        closeSync(fd);
        return reply
          .code(416)
          .header("content-range", `bytes */${stat.size}`)
          .send({ error: `range ${request.headers.range} is outside the file (${stat.size} bytes)`, field: "range" });
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
      return reply.send(createReadStream("", { fd, start, end, autoClose: true }));
    });
  };
}
