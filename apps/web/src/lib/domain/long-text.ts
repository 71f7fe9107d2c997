/** How much of a long answer or output shows before *Show all*: about a screen's worth. */
export const SHOWN_LINES = 24;
/** A line this long is many rows of the page already; past it the text is cut even on few lines. */
export const SHOWN_CHARS = 3000;

export interface Excerpt {
  /** The part shown while collapsed: the whole text when it is short. */
  text: string;
  /** Lines of the text, all of them. */
  lines: number;
  /** Whether `text` leaves anything out. */
  cut: boolean;
}

/**
 * The part of a long text shown collapsed: its first (`keep` "start", an answer) or last (`keep`
 * "end", output still arriving) SHOWN_LINES lines, and at most SHOWN_CHARS characters of them, so
 * an answer without newlines collapses too. A cut never splits a character outside the BMP, nor
 * leaves half a colour code at the end.
 */
export function excerpt(text: string, keep: "start" | "end" = "start", maxLines = SHOWN_LINES, maxChars = SHOWN_CHARS): Excerpt {
  const all = text.split("\n");
  const lines = all.length;
  let part = (keep === "start" ? all.slice(0, maxLines) : all.slice(-maxLines)).join("\n");
  if (part.length > maxChars) {
    let at = keep === "start" ? maxChars : part.length - maxChars;
    const code = part.charCodeAt(at);
    if (code >= 0xdc00 && code <= 0xdfff) at += keep === "start" ? -1 : 1;
    // A cut inside a colour code would show its first half as text.
    part = keep === "start" ? part.slice(0, at).replace(/\u001b(\[[0-?]*[ -/]*)?$/, "") : part.slice(at);
  }
  return { text: part, lines, cut: part.length < text.length };
}
