import { Ollama } from "ollama";

/** How long a metadata call (/api/tags, /api/show, /api/ps) may take: those answer at once. */
const METADATA_TIMEOUT_MS = 10_000;

/**
 * The official client, bound to one server and one abort signal. The client passes a signal only
 * to streamed requests and aborts those through its own iterator, so every request it makes goes
 * through a fetch that also honours ours: a cancelled job drops its connection at once.
 */
export function ollamaClient(baseUrl: string, signal?: AbortSignal): Ollama {
  const bound: typeof fetch = (input, init) => {
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => !!s);
    return fetch(input, { ...init, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] });
  };
  return new Ollama({ host: baseUrl, fetch: bound });
}

/** A signal for one metadata call: aborted by the caller's signal or after the timeout. */
export function metadataSignal(signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(METADATA_TIMEOUT_MS);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** Ollama's error body (`{"error": …}`) and HTTP status, as the client's ResponseError carries them. */
export function responseStatus(err: unknown): number | undefined {
  const status = (err as { status_code?: unknown } | null)?.status_code;
  return typeof status === "number" ? status : undefined;
}

/** True when fetch could not reach the server at all (refused, DNS, reset before a response). */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error) || responseStatus(err) !== undefined) return false;
  if (err.name === "AbortError" || err.name === "TimeoutError") return false;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return err instanceof TypeError || typeof code === "string";
}

export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");
}

export function unreachableMessage(baseUrl: string, err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `Ollama is not reachable at ${baseUrl} (${why}); start it with \`ollama serve\`, or point CORRAL_OLLAMA_URL (or the agent's baseUrl) at a running server`;
}

export const pullHint = (model: string) => `model ${model} is not on the Ollama server; get it with \`ollama pull ${model}\``;

/** Ollama names a model `name:tag`; a bare name means `:latest`. */
export function sameModel(a: string, b: string): boolean {
  const norm = (m: string) => (/:[^/]+$/.test(m) ? m : `${m}:latest`);
  return norm(a) === norm(b);
}

export function noToolsMessage(model: string, toolModels: string[]): string {
  const others = toolModels.filter((m) => !sameModel(m, model));
  return `${model} does not support tools; tool-capable models here: ${others.length ? others.join(", ") : "none (pull one, e.g. `ollama pull qwen2.5:7b`)"}`;
}

/**
 * Turns what the client threw into a message a user can act on. `toolModels` lists the server's
 * tool-capable models, fetched only when the answer is Ollama's "does not support tools".
 */
export async function explainOllamaError(
  err: unknown,
  ctx: { baseUrl: string; model: string; toolModels?: () => Promise<string[]> },
): Promise<string> {
  if (isUnreachable(err)) return unreachableMessage(ctx.baseUrl, err);
  if (isAbort(err)) return err instanceof Error && err.name === "TimeoutError" ? `Ollama at ${ctx.baseUrl} did not answer in time` : "cancelled";
  const message = err instanceof Error ? err.message : String(err);
  const status = responseStatus(err);
  if (status === 404 && /not found/i.test(message)) return pullHint(ctx.model);
  if (status === 400 && /does not support tools/i.test(message)) {
    return noToolsMessage(ctx.model, ctx.toolModels ? await ctx.toolModels().catch(() => []) : []);
  }
  if (status !== undefined) return `Ollama at ${ctx.baseUrl} answered ${status}: ${message}`;
  return `Ollama at ${ctx.baseUrl}: ${message}`;
}
