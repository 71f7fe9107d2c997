import Anser from "anser";
import type { CSSProperties } from "react";

/** A run of text with one look; `match` marks a search hit inside it. */
export interface Segment {
  text: string;
  className?: string;
  style?: CSSProperties;
  match?: boolean;
}

const cubeLevels = [0, 95, 135, 175, 215, 255];

/** xterm's 256-colour palette above the 16 themed colours: a 6×6×6 cube, then 24 greys. */
export function paletteRgb(index: number): string {
  if (index >= 232) {
    const v = 8 + (index - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const i = index - 16;
  return `rgb(${cubeLevels[Math.floor(i / 36) % 6]}, ${cubeLevels[Math.floor(i / 6) % 6]}, ${cubeLevels[i % 6]})`;
}

const baseNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

/**
 * One colour from anser's class output: the 16 named colours become classes (so light and dark
 * themes can each pick readable shades), the rest become exact rgb.
 */
function colour(value: string | null, truecolor: string | null, layer: "fg" | "bg"): { className?: string; rgb?: string } {
  if (!value) return {};
  if (value === "ansi-truecolor") return truecolor ? { rgb: `rgb(${truecolor})` } : {};
  const palette = /^ansi-palette-(\d+)$/.exec(value);
  if (palette) {
    const n = Number(palette[1]);
    if (n < 16) return { className: `ansi-${n >= 8 ? "bright-" : ""}${baseNames[n % 8]}-${layer}` };
    return { rgb: paletteRgb(n) };
  }
  return { className: `${value}-${layer}` };
}

export function ansiSegments(line: string): Segment[] {
  if (!line.includes("\u001b")) return line ? [{ text: line }] : [];
  return Anser.ansiToJson(line, { use_classes: true, remove_empty: true }).map((entry) => {
    const fg = colour(entry.fg, entry.fg_truecolor, "fg");
    const bg = colour(entry.bg, entry.bg_truecolor, "bg");
    const classes = [fg.className, bg.className, ...entry.decorations.map((d) => `ansi-${d}`)].filter(Boolean);
    const style: CSSProperties = {};
    if (fg.rgb) style.color = fg.rgb;
    if (bg.rgb) style.backgroundColor = bg.rgb;
    return {
      text: entry.content,
      ...(classes.length ? { className: classes.join(" ") } : {}),
      ...(fg.rgb || bg.rgb ? { style } : {}),
    };
  });
}

/** Start offsets of `query` in `text`, case-insensitive, not overlapping. */
export function matchOffsets(text: string, query: string): number[] {
  if (!query) return [];
  const hay = text.toLowerCase();
  const needle = query.toLowerCase();
  const found: number[] = [];
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** Splits segments so every search hit is its own segment with `match` set, keeping colours. */
export function markMatches(segments: Segment[], query: string): Segment[] {
  const plain = segments.map((s) => s.text).join("");
  const hits = matchOffsets(plain, query);
  if (!hits.length) return segments;
  const inHit = (pos: number) => hits.some((h) => pos >= h && pos < h + query.length);
  const out: Segment[] = [];
  let pos = 0;
  for (const segment of segments) {
    let runStart = 0;
    let runMatch = inHit(pos);
    for (let i = 1; i <= segment.text.length; i++) {
      const isMatch = i < segment.text.length ? inHit(pos + i) : !runMatch;
      if (isMatch !== runMatch) {
        out.push({ ...segment, text: segment.text.slice(runStart, i), ...(runMatch ? { match: true } : {}) });
        runStart = i;
        runMatch = isMatch;
      }
    }
    pos += segment.text.length;
  }
  return out;
}
