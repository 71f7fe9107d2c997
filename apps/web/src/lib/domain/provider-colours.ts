/**
 * A chart colour per provider that stays the same on every visit and every page: the providers
 * Corral's agent kinds name have a slot each (distinct), any other provider lands by a hash of its
 * name on one of the slots kept for them. Slots are CSS variables (`--series-N` in styles.css) with
 * a light and a dark shade, so each stays legible on both themes' surfaces.
 */
const KNOWN = ["anthropic", "openai", "google", "ollama", "aws", "opencode", "local"] as const;
export const SERIES_SLOTS = 10;

/** FNV-1a: stable across browsers and visits, unlike anything keyed on order of appearance. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function providerSlot(provider: string): number {
  const known = (KNOWN as readonly string[]).indexOf(provider);
  if (known >= 0) return known;
  return KNOWN.length + (hash(provider) % (SERIES_SLOTS - KNOWN.length));
}

export function providerColour(provider: string): string {
  return `var(--series-${providerSlot(provider)})`;
}
