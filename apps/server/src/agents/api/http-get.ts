import { Refusal } from "../../lib/confined-files.js";

const MAX_REDIRECTS = 5;
/** The body the model gets, at most; the rest is never read. */
const MAX_BODY_BYTES = 256 * 1024;
const HTTP_TIMEOUT_MS = 30_000;

/** `example.com` allows that host only; `*.example.com` its subdomains (not example.com itself). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return allowed.some((entry) => {
    const rule = entry.toLowerCase().trim();
    return rule.startsWith("*.") ? h.endsWith(rule.slice(1)) : h === rule;
  });
}

function checked(url: string, allowed: readonly string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Refusal(`${url} is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Refusal(`${parsed.protocol} URLs are not fetched; use http or https`);
  if (!hostAllowed(parsed.hostname, allowed)) {
    throw new Refusal(
      `${parsed.hostname} is not on this agent's allowedHosts (${allowed.length ? allowed.join(", ") : "none"}); ask the user to add it`,
    );
  }
  return parsed;
}

async function readCapped(response: Response): Promise<{ text: string; cut: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: "", cut: false };
  const parts: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
    if (size >= MAX_BODY_BYTES) {
      cut = size > MAX_BODY_BYTES;
      await reader.cancel();
      break;
    }
  }
  return { text: Buffer.concat(parts).subarray(0, MAX_BODY_BYTES).toString("utf8"), cut };
}

/** GETs a URL whose host, and every redirect's, is on the allowlist; the body is cut at MAX_BODY_BYTES. */
export async function httpGet(url: string, allowed: readonly string[], signal: AbortSignal): Promise<string> {
  let target = checked(url, allowed);
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(HTTP_TIMEOUT_MS)]);
  for (let hop = 0; ; hop++) {
    const response = await fetch(target, { redirect: "manual", signal: bounded });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      if (hop === MAX_REDIRECTS) throw new Refusal(`more than ${MAX_REDIRECTS} redirects`);
      target = checked(new URL(location, target).href, allowed);
      continue;
    }
    const { text, cut } = await readCapped(response);
    const type = response.headers.get("content-type") ?? "unknown type";
    return `HTTP ${response.status} (${type}) from ${target.href}\n\n${text}${cut ? `\n[…cut at ${MAX_BODY_BYTES} bytes]` : ""}`;
  }
}
