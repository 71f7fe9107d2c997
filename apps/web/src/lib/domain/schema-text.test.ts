import { describe, expect, it } from "vitest";
import { operationsByTag, type OpenApiDocument } from "./openapi.js";
import { schemaText } from "./schema-text.js";

describe("schemaText", () => {
  it("writes an object a field a line, with optional marks, unions, arrays, defaults and descriptions", () => {
    const parts = schemaText({
      type: "object",
      properties: {
        id: { type: "string" },
        status: { type: "string", enum: ["queued", "running"] },
        model: { anyOf: [{ type: "string" }, { type: "null" }] },
        tags: { type: "array", items: { type: "string" } },
        limit: { type: "integer", default: 50, description: "Most rows" },
        env: { type: "object", additionalProperties: { type: "string" } },
      },
      required: ["id", "status", "model"],
    });
    expect(parts).toEqual([
      [
        "{",
        "  id: string",
        '  status: "queued" | "running"',
        "  model: string | null",
        "  tags?: string[]",
        "  limit?: integer  // Most rows; default 50",
        "  env?: { [key: string]: string }",
        "}",
      ].join("\n"),
    ]);
  });

  it("names referenced types instead of repeating them", () => {
    expect(
      schemaText({ type: "object", properties: { jobs: { type: "array", items: { $ref: "#/components/schemas/Job" } } }, required: ["jobs"] }),
    ).toEqual(["{\n  jobs: ", { ref: "Job" }, "[]\n}"]);
  });
});

describe("operationsByTag", () => {
  it("groups operations by tag and reads parameters, bodies, responses and public routes", () => {
    const document: OpenApiDocument = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: {
        "/api/health": { get: { tags: ["server"], security: [], responses: { "200": { description: "ok" } } } },
        "/api/jobs/{id}": {
          get: {
            tags: ["jobs"],
            summary: "One job",
            parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
            responses: {
              "200": { description: "Default Response", content: { "application/json": { schema: { $ref: "#/components/schemas/Job" } } } },
            },
          },
        },
      },
    };
    const groups = operationsByTag(document);
    expect([...groups.keys()]).toEqual(["server", "jobs"]);
    expect(groups.get("server")?.[0]).toMatchObject({ id: "GET /api/health", public: true });
    const job = groups.get("jobs")?.[0];
    expect(job).toMatchObject({ method: "GET", path: "/api/jobs/{id}", public: false, body: undefined });
    expect(job?.parameters).toEqual([{ name: "id", in: "path", required: true, description: undefined, schema: { type: "string" } }]);
    expect(job?.responses[0]?.bodies).toEqual([{ mediaType: "application/json", schema: { $ref: "#/components/schemas/Job" } }]);
  });
});
