import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import { num, obj, str } from "../json-lines.js";
import { isUnreachable } from "../ollama/client.js";
import type { Json } from "../types.js";
import { sseEvents } from "./sse.js";

/** A call that answers at once (health, a session's record, abort) may take this long. */
const CALL_TIMEOUT_MS = 10_000;
/** Such an answer (a session list of a large project included) is far smaller; whoever listens at the address may send anything. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** The body as text, refused past MAX_ANSWER_BYTES without reading on. */
async function boundedText(res: Response, tooLarge: string): Promise<string> {
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    // Leaving the loop cancels the body: the rest is never read.
    if (size > MAX_ANSWER_BYTES) throw new Error(tooLarge);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export const START_HINT =
  "start it with `opencode serve --port <port>` (install it with `npm install -g opencode-ai`) and set the agent's baseUrl to the address it prints";

/** Where an agent's OpenCode server is and how to sign in to it. */
export interface ServerAddress {
  baseUrl: string;
  /** `Authorization` for OpenCode's basic auth, when the server has a password. */
  authorization: string | undefined;
}

/**
 * The agent's server: its baseUrl, and the basic-auth password OpenCode itself reads
 * (OPENCODE_SERVER_PASSWORD, user OPENCODE_SERVER_USERNAME or "opencode") from the agent's env,
 * else from Corral's own environment (the server reads them itself; no worker is started).
 */
export function serverAddress(agent: AgentRow, config: AppConfig): ServerAddress {
  if (!agent.baseUrl) throw new Error(`agent ${agent.name} has no baseUrl; ${START_HINT}`);
  const password = agent.env.OPENCODE_SERVER_PASSWORD ?? config.serverEnv.OPENCODE_SERVER_PASSWORD;
  const user = agent.env.OPENCODE_SERVER_USERNAME || config.serverEnv.OPENCODE_SERVER_USERNAME || "opencode";
  return {
    baseUrl: agent.baseUrl.replace(/\/+$/, ""),
    authorization: password ? `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` : undefined,
  };
}

/**
 * A call OpenCode did not answer as asked: `status` is its HTTP status (401: the password is
 * missing or wrong), or null when the server could not be reached at all.
 */
export class OpencodeCallError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** What OpenCode keeps of a session that Corral needs: its id and the project directory it runs in. */
export interface SessionRef {
  id: string;
  directory: string;
}

/** OpenCode's HTTP API, the few routes a job uses (1.18's `packages/opencode/src/server`). */
export class OpencodeClient {
  constructor(private readonly server: ServerAddress) {}

  get baseUrl(): string {
    return this.server.baseUrl;
  }

  /** `GET /global/health`: `{ healthy: true, version }`. */
  async health(signal?: AbortSignal): Promise<string> {
    const body = obj(await this.call("GET", "/global/health", { signal }));
    return str(body?.version) ?? "unknown";
  }

  /** `GET /session/:id` finds a session of any directory; 404 when there is none. */
  async session(id: string, signal?: AbortSignal): Promise<SessionRef> {
    return sessionRef(await this.call("GET", `/session/${encodeURIComponent(id)}`, { signal }));
  }

  /**
   * `GET /session?roots=true`: the sessions of the server's own directory, without subagents'; the
   * one updated last (the window's current conversation), or undefined when there is none.
   */
  async latestSession(signal?: AbortSignal): Promise<SessionRef | undefined> {
    const list = await this.call("GET", "/session?roots=true", { signal });
    const updated = (info: unknown) => num(obj(obj(info)?.time)?.updated) ?? 0;
    const roots = (Array.isArray(list) ? list : []).filter((info) => obj(info) && !str(obj(info)?.parentID));
    const latest = roots.reduce<unknown>((best, info) => (best === undefined || updated(info) > updated(best) ? info : best), undefined);
    return latest === undefined ? undefined : sessionRef(latest);
  }

  /** `POST /session?directory=…`: a new session whose tools work in `directory`. */
  async createSession(directory: string, title: string, signal?: AbortSignal): Promise<SessionRef> {
    return sessionRef(await this.call("POST", "/session", { directory, body: { title }, signal }));
  }

  /** `POST /session/:id/prompt_async`: stores the message and starts the session's loop, or joins the one running; 204 at once. */
  async promptAsync(session: SessionRef, body: Json, signal?: AbortSignal): Promise<void> {
    await this.call("POST", `/session/${encodeURIComponent(session.id)}/prompt_async`, { directory: session.directory, body, signal });
  }

  /** `POST /session/:id/abort`: stops the session's running loop (its current turn). */
  async abort(session: SessionRef): Promise<void> {
    await this.call("POST", `/session/${encodeURIComponent(session.id)}/abort`, { directory: session.directory });
  }

  /**
   * `GET /event?directory=…`: the bus of the instance serving that directory, as SSE. Events of a
   * session reach only the stream of its own directory.
   */
  async events(directory: string, signal: AbortSignal): Promise<AsyncGenerator<Json>> {
    const res = await this.fetch("GET", "/event", { directory, signal, accept: "text/event-stream" });
    if (!res.body) throw new Error(`OpenCode at ${this.baseUrl} sent no event stream`);
    return sseEvents(res.body);
  }

  private async call(method: string, route: string, opts: CallOptions): Promise<unknown> {
    const res = await this.fetch(method, route, { ...opts, signal: withTimeout(opts.signal) });
    const text = await boundedText(res, `OpenCode at ${this.baseUrl} answered more than ${MAX_ANSWER_BYTES} bytes to ${method} ${route}`);
    return text ? JSON.parse(text) : undefined;
  }

  private async fetch(method: string, route: string, opts: CallOptions & { accept?: string }): Promise<Response> {
    const url = new URL(`${this.baseUrl}${route}`);
    if (opts.directory) url.searchParams.set("directory", opts.directory);
    const headers: Record<string, string> = { accept: opts.accept ?? "application/json" };
    if (this.server.authorization) headers.authorization = this.server.authorization;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      // OpenCode's API never redirects; one followed would take the password and the prompt elsewhere.
      res = await fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal,
        redirect: "error",
      });
    } catch (err) {
      throw isUnreachable(err) ? new OpencodeCallError(unreachableMessage(this.baseUrl, err), null) : err;
    }
    if (res.ok) return res;
    throw new OpencodeCallError(await refusal(this.baseUrl, method, route, res), res.status);
  }
}

interface CallOptions {
  directory?: string;
  body?: Json;
  signal?: AbortSignal;
}

const withTimeout = (signal?: AbortSignal) =>
  signal ? AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]) : AbortSignal.timeout(CALL_TIMEOUT_MS);

function sessionRef(body: unknown): SessionRef {
  const info = obj(body);
  const id = str(info?.id);
  const directory = str(info?.directory);
  if (!id || !directory) throw new Error("OpenCode answered a session without an id or directory");
  return { id, directory };
}

/** OpenCode's errors are `{ name, data: { message } }`; a 401 means the password is missing or wrong. */
async function refusal(baseUrl: string, method: string, route: string, res: Response): Promise<string> {
  if (res.status === 401) {
    return `OpenCode at ${baseUrl} asks for its password: set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME if not "opencode") in the agent's env`;
  }
  const text = await res.text().catch(() => "");
  let message = text.trim().slice(0, 500);
  try {
    const body = obj(JSON.parse(text));
    message = str(obj(body?.data)?.message) ?? str(body?.message) ?? str(body?.name) ?? message;
  } catch {
    // Not JSON: the text as it came.
  }
  return `OpenCode at ${baseUrl} answered ${res.status} to ${method} ${route}${message ? `: ${message}` : ""}`;
}

function unreachableMessage(baseUrl: string, err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `OpenCode is not reachable at ${baseUrl} (${why}); ${START_HINT}`;
}
