import type { FastifyInstance } from "fastify";
import {
  DiffQuerySchema,
  DiscardResultSchema,
  MergeQuerySchema,
  JobAttemptListSchema,
  JobChangesSchema,
  JobGroupSchema,
  JobRelaunchesSchema,
  JobIdSchema,
  JobListQuerySchema,
  JobListSchema,
  JobSchema,
  JobThreadSchema,
  LaunchJobBodySchema,
  LaunchManyBodySchema,
  MergeResultSchema,
  OutputPageSchema,
  OutputQuerySchema,
  OutputTailQuerySchema,
  OutputTailSchema,
  ReadablePageSchema,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../../services.js";
import { restActor } from "../../audit/service.js";
import { BODY_ERRORS, errors } from "../contracts.js";
import { toJob } from "../../jobs/job-view.js";

const IdParamsSchema = z.object({ id: JobIdSchema });
const tags = ["jobs"];

export function jobRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const { jobs, launches, cancels, output, worktrees } = services;

    app.get(
      "/api/jobs",
      {
        schema: {
          summary:
            "Jobs, newest first, filtered by agent, statuses and text in the id, prompt or error; a text search counts up to 1,000 matches past the page",
          tags,
          querystring: JobListQuerySchema,
          response: { 200: JobListSchema, ...errors() },
        },
      },
      async (request) => jobs.list(request.query),
    );

    app.post(
      "/api/jobs",
      {
        schema: {
          summary:
            "Launch a job; it is queued until its agent has a free slot. With `session` (an ended job of the same agent) it continues that job's conversation, in its workdir and with its model unless given",
          tags,
          body: LaunchJobBodySchema,
          response: { 201: JobSchema, ...errors(404, 409, 503, 507, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        // The body's job fields are the launch request's, under the same names.
        const { agent, ...launch } = request.body;
        const { door, client } = restActor(request.headers);
        reply.code(201);
        return launches.launch(agent, launch, door, client);
      },
    );

    app.post(
      "/api/jobs/many",
      {
        schema: {
          summary:
            "Launch one prompt to several agents, one job each, in the order given: each in `<workdir>/<agent>` (without a workdir, in its agent's own), or all in `workdir` with `sharedWorkdir`. Every job is checked before any is queued: a refusal launches none and names the agent",
          tags,
          body: LaunchManyBodySchema,
          response: { 201: JobGroupSchema, ...errors(404, 409, 503, 507, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const { agents, ...launch } = request.body;
        const { door, client } = restActor(request.headers);
        reply.code(201);
        return { jobs: await launches.launchMany(agents, launch, door, client) };
      },
    );

    app.get(
      "/api/jobs/:id",
      { schema: { summary: "One job", tags, params: IdParamsSchema, response: { 200: JobSchema, ...errors(404) } } },
      async (request) => jobs.get(request.params.id),
    );

    app.get(
      "/api/jobs/:id/thread",
      {
        schema: {
          summary:
            "The job's conversation: its first job and the follow-ups (launched with `session`), oldest first; the newest 200 when there are more",
          tags,
          params: IdParamsSchema,
          response: { 200: JobThreadSchema, ...errors(404) },
        },
      },
      async (request) => jobs.thread(request.params.id),
    );

    app.get(
      "/api/jobs/:id/group",
      {
        schema: {
          summary:
            "The jobs launched together with this one by one prompt to several agents, in launch order (just this job when it was launched alone)",
          tags,
          params: IdParamsSchema,
          response: { 200: JobGroupSchema, ...errors(404) },
        },
      },
      async (request) => jobs.group(request.params.id),
    );

    app.get(
      "/api/jobs/:id/relaunches",
      {
        schema: {
          summary: "The jobs relaunched from this one (launched with `relaunchOf`), oldest first; the newest 50 when there are more",
          tags,
          params: IdParamsSchema,
          response: { 200: JobRelaunchesSchema, ...errors(404) },
        },
      },
      async (request) => jobs.relaunches(request.params.id),
    );

    app.get(
      "/api/jobs/:id/attempts",
      {
        schema: {
          summary: "Each try of the job, with the part of the output it wrote",
          tags,
          params: IdParamsSchema,
          response: { 200: JobAttemptListSchema, ...errors(404) },
        },
      },
      async (request) => ({ attempts: await jobs.attempts(request.params.id) }),
    );

    app.post(
      "/api/jobs/:id/cancel",
      { schema: { summary: "Cancel a queued or running job", tags, params: IdParamsSchema, response: { 200: JobSchema, ...errors(404, 507) } } },
      async (request) => cancels.cancel(request.params.id, restActor(request.headers)),
    );

    app.get(
      "/api/jobs/:id/diff",
      {
        schema: {
          summary:
            "A worktree job's change against its base, uncommitted work included: its worktree and branch, commits, `git diff --stat`, and the unified diff (of one `path`, or all; cut at 2 MiB, binary files named)",
          tags,
          params: IdParamsSchema,
          querystring: DiffQuerySchema,
          response: { 200: JobChangesSchema, ...errors(400, 404, 409) },
        },
      },
      async (request) => worktrees.changes(request.params.id, request.query.path),
    );

    app.post(
      "/api/jobs/:id/merge",
      {
        schema: {
          summary:
            "Merge an ended worktree job's branch into its base: a fast-forward, or a merge commit. A conflict is refused (409) naming the files, with nothing merged. Its worktree and branch go. With `head` (the diff's `change.head`), a branch that moved since that diff was read is refused (409)",
          tags,
          params: IdParamsSchema,
          querystring: MergeQuerySchema,
          response: { 200: MergeResultSchema.extend({ job: JobSchema }), ...errors(400, 404, 409) },
        },
      },
      async (request) => {
        const { job, ...merged } = await worktrees.merge(request.params.id, restActor(request.headers), request.query.head);
        return { ...merged, job: toJob(job) };
      },
    );

    app.post(
      "/api/jobs/:id/discard",
      {
        schema: {
          summary:
            "Remove an ended worktree job's worktree and branch, its unmerged commits with them: the answer names those commits, and the commit the branch pointed at (`git branch <branch> <head>` brings it back while git keeps it)",
          tags,
          params: IdParamsSchema,
          response: { 200: DiscardResultSchema.extend({ job: JobSchema }), ...errors(400, 404, 409) },
        },
      },
      async (request) => {
        const { job, ...dropped } = await worktrees.discard(request.params.id, restActor(request.headers));
        return { ...dropped, job: toJob(job) };
      },
    );

    app.get(
      "/api/jobs/:id/output",
      {
        schema: {
          summary: "A page of the job's output from a cursor (0 = the start); `cursor` in the answer is where the next page starts",
          tags,
          params: IdParamsSchema,
          querystring: OutputQuerySchema,
          response: { 200: OutputPageSchema, ...errors(404) },
        },
      },
      async (request) => output.readOutput(request.params.id, request.query.cursor, request.query.limit),
    );

    app.get(
      "/api/jobs/:id/readable",
      {
        schema: {
          summary: "The output as the job's agent kind reads it (the panel's Readable view), a page from its own cursor",
          tags,
          params: IdParamsSchema,
          querystring: OutputQuerySchema,
          response: { 200: ReadablePageSchema, ...errors(404) },
        },
      },
      async (request) => output.readReadable(request.params.id, request.query.cursor, request.query.limit),
    );

    // The last characters a job printed: the panel's live-activity line, without a cursor walk.
    app.get(
      "/api/jobs/:id/tail",
      {
        schema: {
          summary: "The last characters the job printed, and its latest line as the Readable view reads it",
          tags,
          params: IdParamsSchema,
          querystring: OutputTailQuerySchema,
          response: { 200: OutputTailSchema, ...errors(404) },
        },
      },
      async (request) => {
        const job = await jobs.get(request.params.id);
        return { text: output.outputTail(job, request.query.chars), line: await output.readableLine(job) };
      },
    );
  };
}
