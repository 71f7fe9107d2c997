import type { ApiError, ApiErrorCode, ApiErrorDetails, FieldIssue } from "@corral/shared";

/** A failed API call, with the server's message, its code (null from a proxy), the fields it named and the ids it gave. */
export class ApiRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly field: string | undefined,
    readonly issues: FieldIssue[],
    readonly code: ApiErrorCode | null = null,
    readonly details: ApiErrorDetails = {},
  ) {
    super(message);
  }

  /** The message for one form field, from the issue list or the top-level field. */
  messageFor(field: string): string | undefined {
    const issue = this.issues.find((i) => i.field === field || i.field.startsWith(`${field}.`));
    if (issue) return issue.message;
    return this.field === field ? this.message : undefined;
  }

  get unauthorized(): boolean {
    return this.status === 401;
  }
}

async function errorFrom(res: Response): Promise<ApiRequestError> {
  let body: Partial<ApiError> = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // Not JSON (a proxy error page): the status line says enough.
  }
  const message = body.error ?? `${res.status} ${res.statusText}`;
  const { jobId, budgetId, budget, agent } = body;
  return new ApiRequestError(message, res.status, body.field, body.issues ?? [], body.code ?? null, { jobId, budgetId, budget, agent });
}

/**
 * The one way the panel talks to the server: same origin, the HttpOnly cookie carries the token,
 * and `x-corral-client` marks jobs launched by hand.
 */
export async function apiFetch<T>(url: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const headers: Record<string, string> = { "x-corral-client": "panel" };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
    credentials: "same-origin",
  });
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
