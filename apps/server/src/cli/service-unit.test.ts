import { expect, test } from "vitest";
import { renderUnit, serviceEnvironment } from "./service-unit.js";

test("a unit's words are quoted for systemd: specifiers, a command's variables, quotes and backslashes stay literal", () => {
  const text = renderUnit({
    node: "/opt/node 24/bin/node",
    entry: "/home/a/100%/$corral.js",
    environment: { CORRAL_DATA_DIR: 'C:\\ "$HOME" 50%' },
  });
  expect(text).toContain('ExecStart="/opt/node 24/bin/node" "/home/a/100%%/$$corral.js" serve');
  // Environment= expands specifiers but no variables: a `$` there is already literal.
  expect(text).toContain('Environment="CORRAL_DATA_DIR=C:\\\\ \\"$HOME\\" 50%%"');
});

test("a value with a line break is refused: a unit file cannot hold it", () => {
  expect(() => renderUnit({ node: "/usr/bin/node", entry: "/c.js", environment: { CORRAL_HOST: "a\nExecStartPre=/bin/sh" } })).toThrow(/line break/);
});

test("the service keeps PATH, where its data lives and Corral's settings, but neither the token nor the CLI's server URL", () => {
  const kept = serviceEnvironment({
    PATH: "/usr/bin",
    HOME: "/home/a",
    XDG_DATA_HOME: "/data",
    CORRAL_PORT: "4400",
    CORRAL_TOKEN: "secret",
    CORRAL_URL: "http://x",
    AWS_SECRET_ACCESS_KEY: "k",
  });
  expect(kept).toEqual({ CORRAL_PORT: "4400", PATH: "/usr/bin", XDG_DATA_HOME: "/data" });
});
