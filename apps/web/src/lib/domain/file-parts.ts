import type { FileRead } from "@corral/shared";

/** How much of a file the Files page shows at a time. */
export const FILE_PART_BYTES = 512 * 1024;

/**
 * Where the part after `last` starts: its end (the server never splits a character, so the next
 * part begins on one), or null at the end of the file or for a binary file.
 */
export function nextPartOffset(last: FileRead): number | null {
  if (last.binary || last.text === null) return null;
  const end = last.offset + last.length;
  // A part that moved nothing on (the file shrank under it) would ask for itself again.
  return end < last.size && last.length > 0 ? end : null;
}

/** The parts read so far as one text, the bytes they cover, the file's size now and what is left. */
export function joinParts(parts: FileRead[]): { text: string; shown: number; size: number; left: number } {
  const last = parts.at(-1);
  const size = last?.size ?? 0;
  const shown = last ? last.offset + last.length : 0;
  return { text: parts.map((p) => p.text ?? "").join(""), shown, size, left: Math.max(0, size - shown) };
}
