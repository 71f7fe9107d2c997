import type { OutputStream } from "@corral/shared";
import { type Json, LineSplitter, plainTextParser, type OutputParser, type SplitLine, type UsageReport, type WorkerResult } from "./types.js";

export const obj = (v: unknown): Json | undefined => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined);
export const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** One NDJSON event, or undefined for anything else (noise, a partial line, a pretty-printed object). */
export function parseJsonLine(line: string): Json | undefined {
  const text = line.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  try {
    return obj(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Text kept up to a bound, so a worker that talks forever cannot fill memory. */
export class BoundedText {
  private parts: string[] = [];
  private size = 0;
  private cut = false;

  constructor(private readonly max = 256 * 1024) {}

  append(text: string): void {
    if (this.cut) return;
    if (this.size + text.length > this.max) {
      this.parts.push(text.slice(0, this.max - this.size));
      this.size = this.max;
      this.cut = true;
      return;
    }
    this.parts.push(text);
    this.size += text.length;
  }

  set(text: string): void {
    this.reset();
    this.append(text);
  }

  reset(): void {
    this.parts = [];
    this.size = 0;
    this.cut = false;
  }

  value(): string | undefined {
    const text = this.parts.join("").trim();
    if (!text) return undefined;
    return this.cut ? `${text}\n[…truncated]` : text;
  }
}

/** What one CLI's event stream means; the wrapper handles lines, noise and plain-text output. */
export interface EventReader {
  /** Returns usage known so far when this event changed it. */
  event(ev: Json): UsageReport | undefined;
  finish(): WorkerResult;
}

/**
 * Reads a CLI's NDJSON stdout. If stdout never held a JSON event (a CLI too old for the
 * machine-readable flag, or one that failed before it), its plain text is the final text.
 */
export function jsonLinesParser(reader: EventReader): OutputParser {
  const plain = plainTextParser();
  const lines = new LineSplitter();
  let sawEvent = false;
  let usage: UsageReport | undefined;
  const line = ({ text, whole }: SplitLine) => {
    const ev = whole ? parseJsonLine(text) : undefined;
    if (!ev) {
      if (!sawEvent) plain.push(text, "out");
      return;
    }
    sawEvent = true;
    usage = reader.event(ev) ?? usage;
  };
  return {
    push(text: string, stream: OutputStream) {
      if (stream !== "out") return undefined;
      usage = undefined;
      for (const l of lines.push(text)) line(l);
      return usage;
    },
    finish() {
      for (const l of lines.end()) line(l);
      return sawEvent ? reader.finish() : plain.finish();
    },
  };
}

/** Token counts summed over steps, turns or messages. */
export class UsageSum {
  input = 0;
  output = 0;
  cached = 0;
  cost: number | undefined;
  seen = false;

  add(input: number, output: number, cached: number, cost?: number): void {
    this.input += input;
    this.output += output;
    this.cached += cached;
    if (cost !== undefined) this.cost = (this.cost ?? 0) + cost;
    this.seen = true;
  }

  report(model: string | undefined): UsageReport {
    return {
      ...(model ? { model } : {}),
      inputTokens: this.input,
      outputTokens: this.output,
      cachedInputTokens: this.cached,
      ...(this.cost !== undefined ? { costUsd: this.cost } : {}),
    };
  }
}
