import { describe, expect, it } from "vitest";
import { describeUserAgent } from "./user-agent.js";

describe("describeUserAgent", () => {
  it("names browsers with their major version and system", () => {
    const cases: [string, string][] = [
      ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36", "Chrome 140 on Linux"],
      [
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.7339.5 Safari/537.36",
        "Headless Chrome 140 on Linux",
      ],
      [
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/120.0.6099.71 Chrome/120.0.6099.71 Safari/537.36",
        "Chromium 120 on Linux",
      ],
      ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox 128 on macOS"],
      ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:131.0) Gecko/20100101 Firefox/131.0", "Firefox 131 on Windows"],
      [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.2849.68",
        "Edge 130 on Windows",
      ],
      [
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
        "Safari 17 on macOS",
      ],
      [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "Safari 17 on iOS",
      ],
      [
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
        "Chrome 131 on Android",
      ],
      [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 OPR/115.0.0.0",
        "Opera 115 on Windows",
      ],
      ["Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36", "Chrome 130 on ChromeOS"],
      ["Mozilla/5.0 (X11; Linux x86_64)", "Browser on Linux"],
    ];
    for (const [ua, name] of cases) expect(describeUserAgent(ua), ua).toBe(name);
  });

  it("names command-line clients and libraries", () => {
    expect(describeUserAgent("claude-cli/2.1.3 (external, cli)")).toBe("Claude Code 2.1");
    expect(describeUserAgent("claude-code/2.0.14")).toBe("Claude Code 2.0");
    expect(describeUserAgent("curl/8.5.0")).toBe("curl 8.5");
    expect(describeUserAgent("Wget/1.21.4")).toBe("Wget 1.21");
    expect(describeUserAgent("python-requests/2.32.3")).toBe("Python requests 2.32");
    expect(describeUserAgent("Python-urllib/3.12")).toBe("Python urllib 3.12");
    expect(describeUserAgent("node")).toBe("Node.js");
    expect(describeUserAgent("undici")).toBe("Node.js");
    expect(describeUserAgent("Go-http-client/1.1")).toBe("Go HTTP client 1.1");
    expect(describeUserAgent("HTTPie/3.2.2")).toBe("HTTPie 3.2");
    expect(describeUserAgent("PostmanRuntime/7.42.0")).toBe("Postman 7.42");
  });

  it("keeps only the first product's plain name for a client it does not know", () => {
    expect(describeUserAgent("MyTool/1.4.2 (+https://example.com)")).toBe("MyTool 1.4.2");
    expect(describeUserAgent("lynx")).toBe("lynx");
    expect(describeUserAgent("x".repeat(500))).toBe("x".repeat(40));
  });

  it("is robust to empty, huge, control-character and look-alike strings", () => {
    expect(describeUserAgent("")).toBe("unknown browser");
    expect(describeUserAgent("   \t ")).toBe("unknown browser");
    expect(describeUserAgent(null)).toBe("unknown browser");
    expect(describeUserAgent(undefined)).toBe("unknown browser");
    // Nothing of a hostile string but plain characters reaches the name.
    expect(describeUserAgent("<script>alert(1)</script>")).toBe("unknown client");
    expect(describeUserAgent("-rf /")).toBe("unknown client");
    expect(describeUserAgent("\u202eevil/1.0")).toBe("evil 1.0");
    expect(describeUserAgent("\u0000\u001b[31mcurl/8.5.0")).toBe("unknown client");
    // A Cyrillic "с" in "сurl" is not curl, and is not shown.
    expect(describeUserAgent("\u0441url/8.5.0")).toBe("unknown client");
    expect(describeUserAgent("curl/8.5.0\u0000 (injected)")).toBe("curl 8.5");
    // A huge string is cut before it is read, and answers at once.
    const huge = `Mozilla/5.0 (X11; Linux x86_64) ${"(".repeat(1_000_000)} Firefox/128.0`;
    expect(describeUserAgent(huge)).toBe("Browser on Linux");
    expect(describeUserAgent(`Mozilla/5.0 ${"Version/1 ".repeat(100_000)}`)).toBe("Browser");
    expect(describeUserAgent("Mozilla/5.0 (Windows NT 10.0) Firefox/\u0661\u0662\u0663")).toBe("Browser on Windows");
  });
});
