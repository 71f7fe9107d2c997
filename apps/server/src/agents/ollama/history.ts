import type { Message, ToolCall } from "ollama";
import type { Json, TurnMessage } from "../types.js";

/** Earlier turns read back from the registry for a follow-up, at most. */
export const MAX_EARLIER_TURNS = 50;

/**
 * Earlier turns get about half of the model's context: at roughly 4 characters a token, 2
 * characters for each num_ctx token. The other half is the system prompt, the new prompt and the
 * follow-up's own tool calls.
 */
const HISTORY_CHARS_PER_CTX_TOKEN = 2;

export function toTurnMessage(message: Message): TurnMessage {
  const role = message.role === "assistant" || message.role === "tool" ? message.role : "user";
  return {
    role,
    content: message.content,
    toolCalls: message.tool_calls?.length ? (message.tool_calls as unknown as Json[]) : null,
    toolName: message.tool_name ?? null,
  };
}

function toMessage(message: TurnMessage): Message {
  return {
    role: message.role,
    content: message.content,
    ...(message.toolCalls ? { tool_calls: message.toolCalls as unknown as ToolCall[] } : {}),
    ...(message.toolName ? { tool_name: message.toolName } : {}),
  };
}

const sizeOf = (turn: TurnMessage[]) => turn.reduce((sum, m) => sum + m.content.length + (m.toolCalls ? JSON.stringify(m.toolCalls).length : 0), 0);

/** A turn cut to what was asked and the answer: its prompt and its last assistant message without tool calls. */
function compacted(turn: TurnMessage[]): TurnMessage[] {
  const [prompt] = turn;
  const answer = turn.findLast((m) => m.role === "assistant" && !m.toolCalls);
  return [...(prompt ? [prompt] : []), ...(answer ? [answer] : [])];
}

export interface FittedHistory {
  messages: Message[];
  /** Turns sent whole, and cut to their prompt and answer. */
  whole: number;
  compacted: number;
  /** The oldest turns, left out: they did not fit. */
  left: number;
}

/**
 * The earlier turns (oldest first) a follow-up sends, within the history's share of num_ctx:
 * newest first, each whole if it fits, else cut to its prompt and answer (a turn's file contents
 * are what overflows), else it and all older turns are left out, so what is sent has no gap.
 */
export function fitHistory(turns: TurnMessage[][], numCtx: number): FittedHistory {
  let budget = numCtx * HISTORY_CHARS_PER_CTX_TOKEN;
  const kept: TurnMessage[][] = [];
  let whole = 0;
  let cut = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] ?? [];
    const short = sizeOf(turn) <= budget ? turn : compacted(turn);
    const size = sizeOf(short);
    if (size > budget) break;
    budget -= size;
    kept.unshift(short);
    if (short === turn) whole++;
    else cut++;
  }
  return { messages: kept.flat().map(toMessage), whole, compacted: cut, left: turns.length - kept.length };
}
