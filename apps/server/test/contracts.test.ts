import { Validator } from "@seriousme/openapi-schema-validator";
import type { Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, type TestServer } from "./helpers.js";

interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

type ErrorBody = { error: string; field?: string; issues?: { field: string; message: string }[] };

let server: TestServer;
let document: OpenApiDocument;
beforeAll(async () => {
  server = await startServer();
  const res = await api<OpenApiDocument>(server, "GET", "/api/openapi.json");
  expect(res.status).toBe(200);
  document = res.body;
});
afterAll(() => server.close());

/** `/api/jobs/:id` as OpenAPI writes it: `/api/jobs/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, "{$1}");

describe("the OpenAPI document", () => {
  test("validates as OpenAPI 3.1", async () => {
    expect(document.openapi).toBe("3.1.0");
    const result = await new Validator().validate(document as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test("every route the server registered is in it, with a success answer and the error body", () => {
    // HEAD mirrors GET (Fastify adds it); panel pages are files, not API.
    const routes = server.routes().filter((r) => r.method !== "HEAD" && r.access !== "page");
    expect(routes.length).toBeGreaterThan(40);
    for (const route of routes) {
      const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url} is missing`).toBeDefined();
      const statuses = Object.keys(operation?.responses ?? {});
      expect(
        statuses.some((s) => /^[12]\d\d$/.test(s)),
        `${route.method} ${route.url}: ${statuses}`,
      ).toBe(true);
      // MCP routes answer JSON-RPC in the protocol's own shape; /api/health is public and cannot fail.
      if (route.url.startsWith("/mcp") || route.access === "public") continue;
      for (const status of ["400", "401", "500"]) {
        expect(operation?.responses[status]?.content?.["application/json"]?.schema, `${route.method} ${route.url} ${status}`).toEqual({
          $ref: "#/components/schemas/ApiError",
        });
      }
    }
  });

  test("declares the error body with its code and field, the parameters, bodies and typed answers", () => {
    expect(document.components.schemas.ApiError).toMatchObject({
      properties: { error: { type: "string" }, code: { type: "string" }, field: { type: "string" }, issues: { type: "array" } },
      required: ["error", "code"],
    });
    const launch = document.paths["/api/jobs"]?.post;
    expect(launch?.requestBody?.content["application/json"]?.schema).toMatchObject({ required: ["agent", "prompt"] });
    expect(launch?.responses["201"]?.content?.["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/Job" });
    expect(document.paths["/api/jobs/{id}/output"]?.get?.parameters?.map((p) => `${p.in} ${p.name}`).sort()).toEqual([
      "path id",
      "query cursor",
      "query limit",
    ]);
    expect(Object.keys(document.paths["/api/agents/{name}"]?.delete?.responses ?? {})).toContain("204");
  });

  test("names every field in camelCase: parameters, bodies and answers", () => {
    const names: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(collect);
      if (!value || typeof value !== "object") return;
      for (const [key, child] of Object.entries(value)) {
        if (key === "properties" && child && typeof child === "object") names.push(...Object.keys(child));
        collect(child);
      }
    };
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        names.push(...(operation.parameters ?? []).map((p) => p.name));
        collect(operation);
      }
    }
    collect(document.components.schemas);
    expect(names.length).toBeGreaterThan(100);
    expect([...new Set(names.filter((n) => !/^[a-z][a-zA-Z0-9]*$/.test(n)))]).toEqual([]);
  });

  test("is behind the token, and says so", async () => {
    const res = await fetch(`${server.url}/api/openapi.json`);
    expect(res.status).toBe(401);
    expect(document.paths["/api/health"]?.get).toMatchObject({ security: [] });
  });
});

describe("responses are checked against their schemas", () => {
  test("a handler's answer that breaks its schema is a server error, not a wrong body", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "print 1", workdir: `${server.root}/contract` });
    expect(launched.status).toBe(201);
    const jobs = server.services.jobs;
    const get = jobs.get.bind(jobs);
    jobs.get = async (id: string) => ({ ...(await get(id)), status: "sleeping" }) as unknown as Job;
    try {
      const res = await api<ErrorBody>(server, "GET", `/api/jobs/${launched.body.id}`);
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(/internal error/);
    } finally {
      jobs.get = get;
    }
    expect((await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`)).status).toBe(200);
  });

  test("fields a handler adds beyond the schema are not sent", async () => {
    const agents = server.services.agents;
    const list = agents.list.bind(agents);
    agents.list = async () => (await list()).map((a) => ({ ...a, secret: "not in the contract" }));
    try {
      const res = await fetch(`${server.url}/api/agents`, { headers: server.auth });
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain("not in the contract");
    } finally {
      agents.list = list;
    }
  });
});

describe("refused input keeps the API's error body", () => {
  test("a bad param, query or body answers 400 naming the field", async () => {
    const cases: [string, string, unknown, string][] = [
      ["GET", "/api/jobs/NOT-AN-ID", undefined, "id"],
      ["GET", "/api/jobs?limit=0", undefined, "limit"],
      ["GET", "/api/jobs?color=red", undefined, "color"],
      ["POST", "/api/jobs", { agent: "gemini", prompt: "" }, "prompt"],
      ["PATCH", "/api/agents/gemini", { maxConcurrent: "many" }, "maxConcurrent"],
      ["GET", "/api/costs/budgets/0", undefined, "id"],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await api<ErrorBody>(server, method, url, body);
      expect(res.status, `${method} ${url}`).toBe(400);
      expect(res.body.field, `${method} ${url}: ${res.body.error}`).toBe(field);
      expect(res.body.issues?.[0]?.field).toBe(field);
      expect(res.body.error).toMatch(/^invalid input: /);
    }
  });
});
