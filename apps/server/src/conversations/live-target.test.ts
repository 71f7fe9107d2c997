import { describe, expect, it } from "vitest";
import { ServiceError } from "../lib/errors.js";
import { targetUrl } from "./live-target.js";

const CONFIG = { port: 7433 };

const refusal = (server: { url?: string; port?: number }) => {
  try {
    targetUrl(server, CONFIG);
  } catch (err) {
    if (err instanceof ServiceError) return `${err.field}: ${err.message}`;
    throw err;
  }
  throw new Error(`${JSON.stringify(server)} was taken`);
};

describe("a registration's server address", () => {
  it("takes a port as this machine's, and loopback URLs as their origin", () => {
    expect(targetUrl({ port: 4096 }, CONFIG)).toBe("http://127.0.0.1:4096");
    expect(targetUrl({ url: "http://127.0.0.1:4096/" }, CONFIG)).toBe("http://127.0.0.1:4096");
    expect(targetUrl({ url: "http://localhost:4096" }, CONFIG)).toBe("http://localhost:4096");
    expect(targetUrl({ url: "https://[::1]:4096" }, CONFIG)).toBe("https://[::1]:4096");
    expect(targetUrl({ url: "http://127.1.2.3:4096" }, CONFIG)).toBe("http://127.1.2.3:4096");
  });

  it("refuses Corral's own port, whichever loopback spelling names it", () => {
    for (const server of [{ port: 7433 }, { url: "http://localhost:7433" }, { url: "http://[::1]:7433" }, { url: "http://127.0.0.2:7433" }]) {
      expect(refusal(server)).toMatch(/^server\.(port|url): port 7433 is Corral's own/);
    }
  });

  it("refuses other machines, metadata addresses and names that only look local", () => {
    for (const url of [
      "http://169.254.169.254",
      "http://100.100.100.200",
      "http://[fd00:ec2::254]",
      "http://[::ffff:169.254.169.254]",
      "http://192.168.1.10:4096",
      "http://0.0.0.0:4096",
      "http://localhost.example.com:4096",
      "http://127.0.0.1.nip.io:4096",
    ]) {
      expect(refusal({ url })).toMatch(/^server\.url: .* is not this machine/);
    }
  });

  it("refuses other schemes, credentials in the URL, paths, queries and port 0", () => {
    expect(refusal({ url: "ftp://127.0.0.1:21" })).toMatch(/must be http or https, not ftp:/);
    expect(refusal({ url: "javascript:alert(1)" })).toMatch(/must be http or https/);
    expect(refusal({ url: "http://a:b@127.0.0.1:4096" })).toMatch(/cannot carry a user or password/);
    expect(refusal({ url: "http://127.0.0.1:4096/global" })).toMatch(/without a path or query/);
    expect(refusal({ url: "http://127.0.0.1:4096/#x" })).toMatch(/without a path or query/);
    expect(refusal({ url: "http://127.0.0.1:0" })).toMatch(/port 0 is no server's/);
    expect(refusal({ url: "not a url" })).toMatch(/^server\.url: not a url is not a URL/);
  });
});
