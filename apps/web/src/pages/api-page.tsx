import { useDeferredValue, useMemo, useState } from "react";
import { useOpenApiDocument } from "../hooks/use-openapi.js";
import { SchemaBlock, typeAnchor } from "../components/schema-block.js";
import { ErrorState, Loading } from "../components/states.js";
import { operationsByTag, type ApiOperation, type JsonSchema } from "../lib/domain/openapi.js";

const METHOD_BADGE: Record<string, string> = { GET: "info", POST: "ok", PUT: "warn", PATCH: "warn", DELETE: "bad" };

/** The REST API as the server declares it (GET /api/openapi.json): routes, parameters, bodies, answers, and the named types. */
export function ApiPage() {
  const document = useOpenApiDocument();
  const [filter, setFilter] = useState("");
  const wanted = useDeferredValue(filter.trim().toLowerCase());
  const groups = useMemo(() => (document.data ? operationsByTag(document.data) : new Map<string, ApiOperation[]>()), [document.data]);
  if (document.isError) return <ErrorState error={document.error} what="the API description" onRetry={() => void document.refetch()} />;
  if (document.isPending) return <Loading what="the API description" />;
  const matches = (op: ApiOperation) => !wanted || `${op.id} ${op.summary}`.toLowerCase().includes(wanted);
  return (
    <>
      <div className="page-head">
        <h1>API reference</h1>
        <input type="search" placeholder="Filter routes" aria-label="Filter routes" value={filter} onChange={(e) => setFilter(e.target.value)} />
      </div>
      <p className="muted">
        Every REST route with its parameters, body and answers, as the server declares and checks them. Requests need the token as{" "}
        <code>Authorization: Bearer &lt;token&gt;</code> (see Connect) unless marked public. Every error answers{" "}
        <a href={`#${typeAnchor("ApiError")}`}>ApiError</a>: <code>error</code>, and <code>field</code> naming the input at fault. The
        machine-readable document is <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI {document.data.openapi}).
      </p>
      {[...groups].map(([tag, operations]) => {
        const shown = operations.filter(matches);
        if (shown.length === 0) return null;
        return (
          <section key={tag} aria-labelledby={`tag-${tag}`}>
            <h2 id={`tag-${tag}`} style={{ textTransform: "capitalize" }}>
              {tag}
            </h2>
            <div className="stack">
              {shown.map((op) => (
                <OperationView key={op.id} operation={op} />
              ))}
            </div>
          </section>
        );
      })}
      <TypeList schemas={document.data.components?.schemas ?? {}} />
    </>
  );
}

function OperationView({ operation: op }: { operation: ApiOperation }) {
  return (
    <details className="card">
      <summary className="row">
        <span className={`badge ${METHOD_BADGE[op.method] ?? "neutral"}`}>{op.method}</span>
        <code>{op.path}</code>
        <span className="small muted">{op.summary}</span>
        {op.public && <span className="badge neutral">public</span>}
      </summary>
      {op.description && <p className="small">{op.description}</p>}
      {op.parameters.length > 0 && (
        <div className="table-wrap">
          <table aria-label={`Parameters of ${op.id}`}>
            <thead>
              <tr>
                <th>Parameter</th>
                <th>In</th>
                <th>Type</th>
                <th>Description</th>
              </tr>
            </thead>
            <tbody>
              {op.parameters.map((p) => (
                <tr key={`${p.in} ${p.name}`}>
                  <td className="mono">
                    {p.name}
                    {p.required ? "" : "?"}
                  </td>
                  <td className="small">{p.in}</td>
                  <td>
                    <SchemaBlock schema={stripDescription(p.schema)} label={`Type of ${p.name}`} />
                  </td>
                  <td className="small">{p.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {op.body && (
        <>
          <h3>Body</h3>
          <SchemaBlock schema={op.body} label={`Body of ${op.id}`} />
        </>
      )}
      <h3>Responses</h3>
      <dl>
        {op.responses.map((r) => (
          <div key={r.status}>
            <dt className="row">
              <strong className="mono">{r.status}</strong>
              <span className="small muted">{r.description === "Default Response" ? "" : r.description}</span>
            </dt>
            <dd style={{ marginLeft: "1rem" }}>
              {r.bodies.map((b) => (
                <div key={b.mediaType}>
                  {b.mediaType !== "application/json" && <span className="small muted">{b.mediaType}</span>}
                  <SchemaBlock schema={b.schema} label={`Response ${r.status} of ${op.id}`} />
                </div>
              ))}
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/** A parameter's description has its own column. */
const stripDescription = (schema: JsonSchema | undefined) => (schema ? { ...schema, description: undefined } : schema);

function TypeList({ schemas }: { schemas: Record<string, JsonSchema> }) {
  const names = Object.keys(schemas).sort();
  if (names.length === 0) return null;
  return (
    <section aria-labelledby="types-heading">
      <h2 id="types-heading">Types</h2>
      <p className="small muted">
        Named once and referred to by the routes. A name ending in <code>Input</code> is the type as a request may send it (fields with defaults may
        be left out).
      </p>
      {names.map((name) => (
        <div key={name} id={typeAnchor(name)}>
          <h3 className="mono">{name}</h3>
          <SchemaBlock schema={schemas[name]} label={`Type ${name}`} />
        </div>
      ))}
    </section>
  );
}
