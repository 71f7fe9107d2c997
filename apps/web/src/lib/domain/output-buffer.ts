import type { OutputChunk, OutputStream } from "@corral/shared";

export interface OutputLine {
  stream: OutputStream;
  text: string;
}

/** What the panel holds of one job's output: whole lines, and where the next read starts. */
export interface OutputBuffer {
  lines: OutputLine[];
  /** The last line has no newline yet; the next chunk of the same stream continues it. */
  open: boolean;
  cursor: number;
  complete: boolean;
  /** Lines dropped from the front to keep the browser's memory bounded. */
  dropped: number;
}

export const emptyOutput = (): OutputBuffer => ({ lines: [], open: false, cursor: 0, complete: false, dropped: 0 });

/** Enough for any log a person scrolls through; older lines stay readable on the server. */
const MAX_LINES = 100_000;

/**
 * Adds chunks read from `from` (the cursor they start at). Chunks from an older cursor — a
 * poll and a stream message racing — are ignored so no line appears twice.
 */
export function appendOutput(
  buffer: OutputBuffer,
  chunks: OutputChunk[],
  from: number,
  next: number,
  complete: boolean,
  maxLines = MAX_LINES,
): OutputBuffer {
  if (from !== buffer.cursor) return complete && next === buffer.cursor ? { ...buffer, complete } : buffer;
  if (!chunks.length) return { ...buffer, cursor: next, complete };
  const lines = buffer.lines.slice();
  let open = buffer.open;
  for (const chunk of chunks) {
    const parts = chunk.text.replace(/\r\n/g, "\n").split("\n");
    parts.forEach((part, i) => {
      const last = lines[lines.length - 1];
      if (i === 0 && open && last && last.stream === chunk.stream) {
        lines[lines.length - 1] = { stream: chunk.stream, text: last.text + part };
      } else if (i < parts.length - 1 || part !== "") {
        lines.push({ stream: chunk.stream, text: part });
      }
    });
    open = !chunk.text.endsWith("\n");
  }
  const excess = Math.max(0, lines.length - maxLines);
  return {
    lines: excess ? lines.slice(excess) : lines,
    open,
    cursor: next,
    complete,
    dropped: buffer.dropped + excess,
  };
}

/**
 * Adds one streamed chunk that ends at `next`. A stream is contiguous from the cursor it was
 * subscribed with, so anything ending at or before what is held is a duplicate.
 */
export function appendStreamed(buffer: OutputBuffer, chunk: OutputChunk, next: number): OutputBuffer {
  if (next <= buffer.cursor || buffer.complete) return buffer;
  return appendOutput(buffer, [chunk], buffer.cursor, next, false);
}
