/**
 * A user-agent string as a name a person knows: "Chrome 140 on Linux", "Firefox 128 on macOS",
 * "Claude Code 2.1", "curl 8.5". The string comes from whoever signed in, so it is read as hostile:
 * only its first MAX_READ characters are looked at, every pattern is linear, and what is shown is
 * built from the names below and digits, except the fallback, which keeps only a short run of
 * plain characters of the string's first product.
 */

/** Real user agents are a few hundred characters; the server keeps 300. */
const MAX_READ = 1000;
const MAX_FALLBACK = 40;

/** Browsers, the most specific first: Edge and Opera also say Chrome, Chrome also says Safari. */
const browsers: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, "Edge"],
  [/\b(?:OPR|Opera)\/(\d+)/, "Opera"],
  [/\bSamsungBrowser\/(\d+)/, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, "Firefox"],
  [/\bChromium\/(\d+)/, "Chromium"],
  [/\bHeadlessChrome\/(\d+)/, "Headless Chrome"],
  [/\b(?:Chrome|CriOS)\/(\d+)/, "Chrome"],
  [/\bVersion\/(\d+(?:\.\d+)?)\b.{0,60}?\bSafari\//, "Safari"],
];

/** Systems, the most specific first: Android says Linux, iOS says "like Mac OS X". */
const systems: [RegExp, string][] = [
  [/\bWindows\b/, "Windows"],
  [/\bAndroid\b/, "Android"],
  [/\biPad\b/, "iPadOS"],
  [/\b(?:iPhone|iPod)\b/, "iOS"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\b(?:Macintosh|Mac OS X)\b/, "macOS"],
  [/\b(?:Linux|X11)\b/, "Linux"],
  [/\bFreeBSD\b/, "FreeBSD"],
];

/** Programs that say who they are by their first product token, with a major.minor version. */
const programs: [RegExp, string][] = [
  [/^claude-(?:cli|code)\/(\d+(?:\.\d+)?)/i, "Claude Code"],
  [/^corral(?:-cli)?\/(\d+(?:\.\d+)?)/i, "the corral command"],
  [/^curl\/(\d+(?:\.\d+)?)/i, "curl"],
  [/^Wget\/(\d+(?:\.\d+)?)/i, "Wget"],
  [/^HTTPie\/(\d+(?:\.\d+)?)/i, "HTTPie"],
  [/^python-requests\/(\d+(?:\.\d+)?)/i, "Python requests"],
  [/^python-httpx\/(\d+(?:\.\d+)?)/i, "Python httpx"],
  [/^Python-urllib\/(\d+(?:\.\d+)?)/i, "Python urllib"],
  [/^aiohttp\/(\d+(?:\.\d+)?)/i, "Python aiohttp"],
  [/^(?:node-fetch|undici|node)(?:\/(\d+(?:\.\d+)?))?/i, "Node.js"],
  [/^axios\/(\d+(?:\.\d+)?)/i, "axios"],
  [/^Go-http-client\/(\d+(?:\.\d+)?)/i, "Go HTTP client"],
  [/^okhttp\/(\d+(?:\.\d+)?)/i, "OkHttp"],
  [/^PostmanRuntime\/(\d+(?:\.\d+)?)/i, "Postman"],
  [/^insomnia\/(\d+(?:\.\d+)?)/i, "Insomnia"],
];

const withVersion = (name: string, version: string | undefined) => (version ? `${name} ${version}` : name);

/** What is left of a string nothing above knows: its first product's name and version, plain characters only. */
function fallback(text: string): string {
  const first = /^[A-Za-z][A-Za-z0-9._-]*(?:\/[0-9][A-Za-z0-9.]*)?/.exec(text)?.[0];
  if (!first) return "unknown client";
  const [name = "", version] = first.split("/");
  return withVersion(name, version).slice(0, MAX_FALLBACK);
}

/** The name a person knows for the browser or program that sent `userAgent`; "unknown browser" for none. */
export function describeUserAgent(userAgent: string | null | undefined): string {
  // Control and invisible formatting characters (bidi overrides included) are never read or shown.
  const text = (userAgent ?? "")
    .slice(0, MAX_READ)
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, " ")
    .trim();
  if (!text) return "unknown browser";
  for (const [pattern, name] of programs) {
    const found = pattern.exec(text);
    if (found) return withVersion(name, found[1]);
  }
  if (/^Mozilla\//.test(text) || /\b(?:AppleWebKit|Gecko)\//.test(text)) {
    const browser = browsers.find(([pattern]) => pattern.test(text));
    const version = browser?.[0].exec(text)?.[1]?.split(".")[0];
    const system = systems.find(([pattern]) => pattern.test(text))?.[1];
    const name = browser ? withVersion(browser[1], version) : "Browser";
    return system ? `${name} on ${system}` : name;
  }
  return fallback(text);
}
