import { parseJsonLine } from "../json-lines.js";
import type { Json } from "../types.js";

/** One event of OpenCode's bus can carry a whole tool output; anything larger is not an event we can use. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * The JSON events of a `text/event-stream` body, in order. OpenCode sends each as one `data:` line
 * (`{"id","type","properties"}`) followed by a blank line; a multi-line data field is joined as the
 * SSE rules say. Fields other than `data` (comments, `retry:`) are skipped.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<Json> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let dataChars = 0;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      if (line === "") {
        const event = data.length ? parseJsonLine(data.join("\n")) : undefined;
        data = [];
        dataChars = 0;
        if (event) yield event;
      } else if (line.startsWith("data:")) {
        const value = line.slice(line[5] === " " ? 6 : 5);
        dataChars += value.length;
        if (dataChars > MAX_EVENT_CHARS) throw new Error(`an event on OpenCode's stream is larger than ${MAX_EVENT_CHARS} characters`);
        data.push(value);
      }
    }
    if (buffer.length > MAX_EVENT_CHARS) throw new Error(`an event on OpenCode's stream is larger than ${MAX_EVENT_CHARS} characters`);
  }
}
