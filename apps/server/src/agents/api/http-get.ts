import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { type IncomingMessage, request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { promisify } from "node:util";
import { Refusal } from "../../lib/confined-files.js";
import { refusedAddress } from "./refused-addresses.js";

const MAX_REDIRECTS = 5;
/** The body the model gets, at most; the rest is never read. */
const MAX_BODY_BYTES = 256 * 1024;
const HTTP_TIMEOUT_MS = 30_000;

/** Every address a host name has (the system resolver: /etc/hosts included); IP literals answer themselves. */
export type Resolve = (host: string) => Promise<LookupAddress[]>;
const systemResolve: Resolve = (host) => promisify(dnsLookup)(host, { all: true, verbatim: true });

/** `example.com`, `127.1` or `[::1]` as the URL parser spells its host, so an allowlist entry compares with it. */
const canonical = (host: string): string => {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  try {
    return new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return bare;
  }
};

/** `example.com` allows that host only; `*.example.com` its subdomains (not example.com itself). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = canonical(host);
  return allowed.some((entry) => {
    const rule = entry.toLowerCase().trim();
    return rule.startsWith("*.") ? h.endsWith(rule.slice(1)) : h === canonical(rule);
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

/**
 * The one address the request will connect to: the host is resolved once, and every answer must be
 * reachable (a name with one loopback answer among public ones is refused whole).
 */
async function pinnedAddress(target: URL, resolve: Resolve): Promise<LookupAddress> {
  const host = target.hostname.replace(/^\[|\]$/g, "");
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new Error(`${host} does not resolve (${err instanceof Error ? err.message : String(err)})`);
  }
  for (const { address } of addresses) {
    const reason = refusedAddress(address);
    if (reason) throw new Refusal(`${host} resolves to ${address}, ${reason}; http_get reaches no such address, whatever the allowlist says`);
  }
  const first = addresses[0];
  if (!first) throw new Error(`${host} does not resolve (no address)`);
  return first;
}

/** A lookup that answers the checked address only, so a second DNS answer cannot rebind the connection. */
const pinnedLookup =
  (pinned: LookupAddress): LookupFunction =>
  (_host, options, callback) => {
    if (options.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };

function get(target: URL, pinned: LookupAddress, signal: AbortSignal): Promise<IncomingMessage> {
  const options: RequestOptions = {
    // The host name stays for the Host header, TLS's SNI and certificate check; the address is pinned.
    host: target.hostname.replace(/^\[|\]$/g, ""),
    port: target.port || undefined,
    path: `${target.pathname}${target.search}`,
    headers: { accept: "*/*", "user-agent": "corral-http_get" },
    lookup: pinnedLookup(pinned),
    // A fresh connection each time: a pooled one would be keyed by name, not by the address checked now.
    agent: false,
    signal,
  };
  return new Promise((resolve, reject) => {
    const req = (target.protocol === "https:" ? httpsRequest : httpRequest)(options, resolve);
    req.on("error", reject);
    req.end();
  });
}

async function readCapped(response: IncomingMessage): Promise<{ text: string; cut: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  let cut = false;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_BYTES) {
      cut = size > MAX_BODY_BYTES;
      break;
    }
  }
  response.destroy();
  return { text: Buffer.concat(parts).subarray(0, MAX_BODY_BYTES).toString("utf8"), cut };
}

/**
 * GETs a URL whose host, and every redirect's, is on the allowlist and resolves to an address off
 * this machine's own (refused-addresses.ts); the connection goes to the address that was checked.
 * The body is cut at MAX_BODY_BYTES.
 */
export async function httpGet(url: string, allowed: readonly string[], signal: AbortSignal, resolve: Resolve = systemResolve): Promise<string> {
  let target = checked(url, allowed);
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(HTTP_TIMEOUT_MS)]);
  for (let hop = 0; ; hop++) {
    const response = await get(target, await pinnedAddress(target, resolve), bounded);
    const location = response.headers.location;
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && location) {
      response.destroy();
      if (hop === MAX_REDIRECTS) throw new Refusal(`more than ${MAX_REDIRECTS} redirects`);
      target = checked(new URL(location, target).href, allowed);
      continue;
    }
    const { text, cut } = await readCapped(response);
    const type = response.headers["content-type"] ?? "unknown type";
    return `HTTP ${status} (${type}) from ${target.href}\n\n${text}${cut ? `\n[…cut at ${MAX_BODY_BYTES} bytes]` : ""}`;
  }
}
