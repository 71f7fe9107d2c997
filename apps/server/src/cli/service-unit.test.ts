import { expect, test } from "vitest";
import { renderUnit, serviceEnvironment } from "./service-unit.js";

test("a unit's words are quoted for systemd: specifiers, an argument's variables, quotes and backslashes stay literal", () => {
  const text = renderUnit({
    node: "/opt/node $24/bin/node",
    entry: "/home/a/100%/$corral.js",
    environment: { CORRAL_DATA_DIR: 'C:\\ "$HOME" 50%' },
    cwd: "/home/a/50% done",
  });
  // systemd expands no variable in the executable, nor in Environment=: a `$` there is already literal.
  expect(text).toContain('ExecStart="/opt/node $24/bin/node" "/home/a/100%%/$$corral.js" serve');
  expect(text).toContain('Environment="CORRAL_DATA_DIR=C:\\\\ \\"$HOME\\" 50%%"');
  expect(text).toContain("WorkingDirectory=/home/a/50%% done\n");
});

test("what a unit cannot hold is refused: a line break anywhere, a quote in the executable, a relative directory", () => {
  const unit = { node: "/usr/bin/node", entry: "/c.js", environment: {}, cwd: "/home/a" };
  expect(() => renderUnit({ ...unit, environment: { CORRAL_HOST: "a\nExecStartPre=/bin/sh" } })).toThrow(/line break/);
  expect(() => renderUnit({ ...unit, node: '/opt/"node"/bin/node' })).toThrow(/systemd will not run/);
  expect(() => renderUnit({ ...unit, node: "/opt/a\\b/node" })).toThrow(/systemd will not run/);
  expect(() => renderUnit({ ...unit, cwd: "home/a" })).toThrow(/not a directory a unit can start in/);
});

test("the service keeps PATH, where its data lives and Corral's settings (the token too), but not the CLI's server URL nor other secrets", () => {
  const kept = serviceEnvironment({
    PATH: "/usr/bin",
    HOME: "/home/a",
    XDG_DATA_HOME: "/data",
    CORRAL_PORT: "4400",
    CORRAL_TOKEN: "secret-of-sixteen-chars",
    CORRAL_URL: "http://x",
    AWS_SECRET_ACCESS_KEY: "k",
  });
  expect(kept).toEqual({ CORRAL_PORT: "4400", CORRAL_TOKEN: "secret-of-sixteen-chars", PATH: "/usr/bin", XDG_DATA_HOME: "/data" });
});
