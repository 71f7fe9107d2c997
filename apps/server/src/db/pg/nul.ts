/**
 * PostgreSQL refuses U+0000 in text and in jsonb strings (SQLite keeps it), so a value that comes
 * from outside (a worker's output, a model's tool call, an Ollama listing) would fail its whole
 * statement, and the job or listing with it. Such values are stored with U+FFFD in its place,
 * in strings and object keys at any depth.
 */
export function withoutNul<T>(value: T): T {
  if (typeof value === "string") return (value.includes("\u0000") ? value.replaceAll("\u0000", "\ufffd") : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)])) as T;
  }
  return value;
}
