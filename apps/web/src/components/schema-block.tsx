import type { JsonSchema } from "../lib/domain/openapi.js";
import { schemaText } from "../lib/domain/schema-text.js";

/** The element id of a named type on the API reference page. */
export const typeAnchor = (name: string) => `type-${name}`;

/** A schema as readable type text; named types link to their definition. */
export function SchemaBlock({ schema, label }: { schema: JsonSchema | undefined; label: string }) {
  return (
    <pre className="block" role="group" aria-label={label}>
      {schemaText(schema).map((part, i) =>
        typeof part === "string" ? (
          part
        ) : (
          <a key={i} href={`#${typeAnchor(part.ref)}`}>
            {part.ref}
          </a>
        ),
      )}
    </pre>
  );
}
