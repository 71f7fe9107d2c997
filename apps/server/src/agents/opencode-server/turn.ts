import { randomInt } from "node:crypto";
import { BoundedText, num, obj, str, UsageSum } from "../json-lines.js";
import { stepTokens } from "../kinds/opencode.js";
import type { Json, UsageReport, WorkerIO, WorkerResult } from "../types.js";
import type { OpencodeClient, SessionRef } from "./client.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * OpenCode's ascending ids (`Identifier.ascending`): `prefix_`, 12 hex digits, 14 base62
 * characters. The hex digits are the low 48 bits of `ms × 4096 + counter` on the server's clock.
 * OpenCode orders a session's messages by id and answers the latest user message, so ours must
 * sort after everything already there, whatever Corral's clock says.
 */
const ID_BITS = (1n << 48n) - 1n;

/** The ordering value of an ascending id (its 48 bits), or undefined for anything else. */
export function idValue(id: string): bigint | undefined {
  const hex = /^[a-z]+_([0-9a-f]{12})/.exec(id)?.[1];
  return hex ? BigInt(`0x${hex}`) : undefined;
}

/** An ascending id with this ordering value. */
export function ascendingId(prefix: string, value: bigint): string {
  let tail = "";
  for (let i = 0; i < 14; i++) tail += BASE62[randomInt(62)];
  return `${prefix}_${(value & ID_BITS).toString(16).padStart(12, "0")}${tail}`;
}

/** The value OpenCode would give an id made now on this machine's clock. */
export const clockValue = () => (BigInt(Date.now()) * 4096n) & ID_BITS;

/** What `opencode run --format json` prints for a finished part, so the CLI kind's reader shows both alike. */
function runLine(part: Json, sessionID: string): Json | undefined {
  const time = obj(part.time);
  const state = obj(part.state);
  const line = (type: string) => ({ type, timestamp: Date.now(), sessionID, part });
  switch (part.type) {
    case "step-start":
      return line("step_start");
    case "step-finish":
      return line("step_finish");
    case "text":
      return num(time?.end) !== undefined ? line("text") : undefined;
    case "reasoning":
      return num(time?.end) !== undefined ? line("reasoning") : undefined;
    case "tool":
      return state?.status === "completed" || state?.status === "error" ? line("tool_use") : undefined;
    default:
      return undefined;
  }
}

/** OpenCode's error objects are `{ name, data: { message } }`. */
function errorText(error: unknown): string {
  const err = obj(error);
  if (err?.name === "MessageAbortedError") return "the turn was aborted in OpenCode";
  return str(obj(err?.data)?.message) ?? str(err?.message) ?? str(err?.name) ?? "OpenCode reported an error";
}

/**
 * Follows one message through a session's event stream: the assistant messages that answer it
 * (`parentID` = our message), their parts as run-format lines, their usage; done when the session
 * goes idle after our message was stored. Events of other sessions and of turns that answer other
 * messages (the run we joined) are not this job's.
 */
export class TurnReader {
  private seenPrompt = false;
  private readonly replies = new Set<string>();
  private readonly emitted = new Set<string>();
  private readonly usage = new UsageSum();
  private readonly answer = new BoundedText();
  private model: string | undefined;
  private error: string | undefined;

  constructor(
    private readonly sessionID: string,
    private readonly messageID: string,
    private readonly io: Pick<WorkerIO, "write" | "usage">,
  ) {}

  /** Takes one bus event; true once the turn is over. */
  push(ev: Json): boolean {
    const props = obj(ev.properties);
    if (str(props?.sessionID) !== this.sessionID) return false;
    switch (ev.type) {
      case "message.updated":
        this.message(obj(props?.info));
        return false;
      case "message.part.updated": {
        const part = obj(props?.part);
        if (part && this.replies.has(str(part.messageID) ?? "")) this.part(part);
        return false;
      }
      case "session.error":
        // Before our message is stored, an error is prompt_async failing it (an unknown model or
        // agent): no loop runs, so no idle follows, and the turn is over.
        this.fail(props?.error);
        return !this.seenPrompt;
      case "session.status":
        return this.seenPrompt && obj(props?.status)?.type === "idle";
      case "session.idle":
        return this.seenPrompt;
      default:
        return false;
    }
  }

  /** The job's result once the turn is over; throws when OpenCode failed it or never answered. */
  result(): WorkerResult {
    if (this.error) throw new Error(this.error);
    if (this.replies.size === 0) throw new Error("OpenCode went idle without answering the message");
    const finalText = this.answer.value();
    return { ...(finalText ? { finalText } : {}), ...(this.usage.seen ? { usage: this.usage.report(this.model) } : {}), sessionId: this.sessionID };
  }

  private message(info: Json | undefined): void {
    const id = str(info?.id);
    if (!info || !id) return;
    if (info.role === "user" && id === this.messageID) this.seenPrompt = true;
    if (info.role !== "assistant" || info.parentID !== this.messageID) return;
    this.replies.add(id);
    const provider = str(info.providerID);
    const model = str(info.modelID);
    if (provider && model) this.model = `${provider}/${model}`;
    if (info.error !== undefined) this.fail(info.error);
  }

  private part(part: Json): void {
    const line = runLine(part, this.sessionID);
    const id = str(part.id);
    if (!line || !id || this.emitted.has(id)) return;
    this.emitted.add(id);
    this.io.write("out", `${JSON.stringify(line)}\n`);
    if (part.type === "text") this.answer.set(str(part.text) ?? "");
    if (part.type === "step-finish") {
      const t = stepTokens(part);
      this.usage.add(t.input, t.output, t.cached, t.cost);
      this.io.usage(this.usage.report(this.model) satisfies UsageReport);
    }
  }

  private fail(error: unknown): void {
    this.error ??= errorText(error);
    this.io.write("out", `${JSON.stringify({ type: "error", timestamp: Date.now(), sessionID: this.sessionID, error })}\n`);
  }
}

/** Feeds the stream to the reader; false when the stream ended first. A dropped connection says so, not fetch's bare "terminated". */
async function followed(events: AsyncGenerator<Json>, reader: TurnReader, signal: AbortSignal): Promise<boolean> {
  try {
    for await (const ev of events) if (reader.push(ev)) return true;
    return false;
  } catch (err) {
    if (signal.aborted) throw err;
    throw new Error(`the connection to OpenCode's event stream broke before the turn ended (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Where the job's message goes, and with which model (`provider/model`, OpenCode's own form). */
export interface TurnRequest {
  client: OpencodeClient;
  session: SessionRef;
  prompt: string;
  model: { providerID: string; modelID: string } | undefined;
  io: WorkerIO;
  /** The session is someone else's running conversation (a live target's): a stop only stops following it, never aborts its loop. */
  leaveRunning?: boolean;
}

/**
 * Posts the prompt with `prompt_async` and follows the session's event stream until the turn
 * that answers it ends. The stream is open before the post, so nothing of the answer is missed.
 * Posted into a busy session, the message joins the running loop (OpenCode re-reads the session
 * before each model step and only stops once the latest user message has an answer), so it is
 * answered in that turn. Cancel, timeout and budget stops abort the session's loop in OpenCode.
 */
export async function runTurn(req: TurnRequest): Promise<WorkerResult> {
  const { client, session, io } = req;
  const closeStream = new AbortController();
  try {
    const events = await client.events(session.directory, AbortSignal.any([io.signal, closeStream.signal]));
    // OpenCode greets each subscriber with `server.connected`, its id made on the server's clock
    // after every message already in the session: ours sorts right after it.
    const hello = await events.next();
    const messageID = ascendingId("msg", (idValue(str(hello.value?.id) ?? "") ?? clockValue()) + 1n);
    const reader = new TurnReader(session.id, messageID, io);
    const parts = [{ type: "text", text: req.prompt }];
    await client.promptAsync(session, { messageID, parts, ...(req.model ? { model: req.model } : {}) }, io.signal);
    if (!(await followed(events, reader, io.signal))) throw new Error(`OpenCode at ${client.baseUrl} closed its event stream before the turn ended`);
    return reader.result();
  } catch (err) {
    if (!io.signal.aborted) throw err;
    if (!req.leaveRunning) await client.abort(session).catch(() => undefined);
    throw new Error("cancelled");
  } finally {
    closeStream.abort();
  }
}
