import { CliError, EXIT } from "./exit-codes.js";
import { oneLine } from "./format.js";
import type { Target } from "./settings.js";

/** How a person starts the server, for the message when there is none. */
export const START_HINT = "start it with `corral serve` (`pnpm start` in a checkout), or set CORRAL_URL to where it runs";

/** A REST call to the server as the token's holder; any refusal becomes a CliError with its exit code. */
export async function request<T>(target: Target, method: "GET" | "POST", route: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw unreachable(target, err);
  }
  const text = await res.text();
  const answer = parseJson(text);
  if (res.ok) return answer as T;
  throw refusal(target, res.status, answer);
}

export function unreachable(target: Target, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new CliError(`no Corral server answers at ${target.url} (${why}): ${START_HINT}`, EXIT.unreachable);
}

/** The CliError for an HTTP refusal, worded from the server's `{ error, field }`. */
export function refusal(target: Target, status: number, answer: unknown): CliError {
  const { error, field, code } = (answer ?? {}) as { error?: string; field?: string; code?: string };
  if (status === 401) {
    const fix =
      target.tokenSource === "CORRAL_TOKEN"
        ? "set CORRAL_TOKEN to the token the server runs with"
        : `it is not the token of the server at ${target.url}: set CORRAL_DATA_DIR to that server's data dir, or CORRAL_TOKEN to its token`;
    return new CliError(`the server refused the token from ${target.tokenSource}: ${fix}`, EXIT.unauthorized);
  }
  if (code === "rate_limited") {
    return new CliError(
      `the server refuses this address for now (${oneLine(error ?? "too many wrong tokens")}): wait a minute and check the token`,
      EXIT.unauthorized,
    );
  }
  // A provider's budget refused the job before it ran: the same end as a job stopped by its budget.
  if (code === "budget_exceeded") return new CliError(serverMessage(error ?? "budget exceeded", field), EXIT.budget_exceeded);
  return new CliError(serverMessage(error ?? `HTTP ${status}`, field), EXIT.refused);
}

/** A refusal's text as the server wrote it, on one line: it can quote what was sent, control characters and all. */
export function serverMessage(error: string, field?: string): string {
  return oneLine(field ? `${error} (field: ${field})` : error);
}

/** An answer's body as JSON; a body that is not JSON becomes the error text it most likely is. */
export function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 500) };
  }
}
