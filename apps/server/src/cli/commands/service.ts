import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { type AppConfig, ConfigError, loadConfig } from "../../config.js";
import { PRIVATE_FILE_MODE } from "../../lib/private-files.js";
import { defineCommand, usageError } from "../command.js";
import { CliError, EXIT } from "../exit-codes.js";
import { renderUnit, serviceEnvironment, unitPath } from "../service-unit.js";

export const service = defineCommand({
  name: "service",
  summary: "install the server as a systemd user service (corral service install)",
  usage: "install [--print] [--force]",
  help: `Writes a systemd user unit, ~/.config/systemd/user/corral.service (owner-only), that runs
\`corral serve\` with this Node and this corral, in this directory, with the settings of this
shell: its PATH (where the agents' CLIs are) and every CORRAL_* setting, the token included, so it
starts as \`corral serve\` would here. Then it prints the commands that start it. Run it again after
moving corral or changing a setting.

  --print   print the unit and write nothing
  --force   replace a corral.service that differs (it says so otherwise)`,
  options: { print: { type: "boolean" }, force: { type: "boolean" } },
  positionals: { min: 1, max: 1 },
  async run({ positionals, values, env }) {
    if (positionals[0] !== "install") throw usageError(service, `unknown action ${JSON.stringify(positionals[0])}; the one action is install`);
    if (process.platform !== "linux") {
      throw new CliError(`systemd user services are Linux's; on ${process.platform}, start corral serve from your own service manager`, EXIT.usage);
    }
    // The built command, as a real path (an npm bin is a link): a service cannot run TypeScript sources.
    const entry = realpathSync(process.argv[1] ?? "");
    if (!entry.endsWith(".js")) {
      throw new CliError(
        `corral runs from its sources here (${entry}); build it (pnpm build) and run the built one: node apps/server/dist/corral.js service install`,
        EXIT.usage,
      );
    }
    // npx runs a package from npm's cache, which npm clears as it likes: a unit must name an install.
    if (entry.split(path.sep).includes("_npx")) {
      throw new CliError(
        `corral runs from npx's cache here (${entry}), which npm may clear; install it first (npm install -g --allow-scripts=better-sqlite3 with the package or tarball you ran), then run corral service install`,
        EXIT.usage,
      );
    }
    // The settings checked as the server will check them, in the environment the unit gives it (a
    // user manager adds HOME and USER): a unit that could not start is not written.
    const environment = serviceEnvironment(env);
    let config: AppConfig;
    try {
      config = loadConfig({ HOME: env.HOME, USER: env.USER, ...environment });
    } catch (err) {
      if (err instanceof ConfigError)
        throw new CliError(`${err.message}\n(the service would start with these settings; fix them, then install)`, EXIT.usage);
      throw err;
    }
    let text: string;
    try {
      text = renderUnit({ node: process.execPath, entry, environment, cwd: process.cwd() });
    } catch (err) {
      throw new CliError(`${(err as Error).message}; change it in this shell, then install`, EXIT.usage);
    }
    if (values.print) {
      process.stdout.write(text);
      return EXIT.succeeded;
    }
    const file = unitPath(env, config.homeDir);
    if (existsSync(file) && readFileSync(file, "utf8") !== text && !values.force) {
      throw new CliError(
        `${file} is there and differs from the unit this would write (corral service install --print shows it); pass --force to replace it`,
        EXIT.usage,
      );
    }
    mkdirSync(path.dirname(file), { recursive: true });
    // Owner-only (CORRAL_DATABASE_URL may hold a password), and put in place by a rename, which
    // replaces whatever is at that name (a link included) rather than writing through it.
    const fresh = `${file}.${randomUUID()}.tmp`;
    writeFileSync(fresh, text, { mode: PRIVATE_FILE_MODE, flag: "wx" });
    renameSync(fresh, file);
    process.stdout.write(
      `Wrote ${file}: corral serve with ${process.execPath} and ${entry}, this shell's PATH and Corral settings.\n` +
        "Start it now and at each login:\n" +
        "  systemctl --user daemon-reload && systemctl --user enable --now corral\n" +
        `Keep it running after you log out:  loginctl enable-linger ${env.USER ?? "$USER"}\n` +
        "Its log (and the URL to open):     journalctl --user -u corral -f\n" +
        `The token: ${env.CORRAL_TOKEN ? "CORRAL_TOKEN, as in this shell (the unit is owner-only)" : `the file ${path.join(config.dataDir, "token")}, as under corral serve`}.\n` +
        "API keys and CORRAL_PASS_ENV's variables are not carried: give them in an owner-only EnvironmentFile= (systemctl --user edit corral; docs/install.md).\n",
    );
    return EXIT.succeeded;
  },
});
