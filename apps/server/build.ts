// `pnpm build` for the server: one ESM bundle, dist/server.js, plus chunks for what loads on
// demand (the MCP SDK with the first MCP session). Resolving and reading some 500 modules one by
// one was most of a cold start; a bundle is read in one go. Types are checked by `pnpm typecheck`.
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions, type Plugin } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * zod exports its 40-odd message locales from its one namespace, so a bundle keeps them all: a
 * tenth of what a start parsed. Corral's messages are English (zod's default, set by zod itself).
 */
const englishZod: Plugin = {
  name: "english-zod",
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
    }));
  },
};

/**
 * @fastify/swagger requires `yaml` at load for a YAML document Corral never asks for (it serves
 * `fastify.swagger()` as JSON): parsing and starting that library was a tenth of a cold start. Its
 * copy for @fastify/swagger is a module that says so if it is ever called.
 */
const noSwaggerYaml: Plugin = {
  name: "no-swagger-yaml",
  setup(build) {
    build.onResolve({ filter: /^yaml$/ }, (args) =>
      /[\\/]@fastify[\\/]swagger[\\/]/.test(args.importer) ? { path: "swagger-yaml", namespace: "no-swagger-yaml" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "no-swagger-yaml" }, () => ({
      contents:
        'const refuse = () => { throw new Error("the OpenAPI document is served as JSON only: YAML is not bundled"); };\n' +
        "module.exports = { parse: refuse, stringify: refuse };",
      loader: "js",
    }));
  },
};

export function serverBuildOptions(outdir: string): BuildOptions {
  return {
    // `corral`, the command (package.json `bin`; `corral serve` and `corral runner` too), shares the bundle's chunks (zod, @corral/shared).
    entryPoints: {
      server: path.join(here, "src/server.ts"),
      corral: path.join(here, "src/cli/main.ts"),
      // An acp agent's worker: Corral's ACP client, started by jobs (agents/acp/client-command.ts).
      "acp-client": path.join(here, "src/agents/acp/client-main.ts"),
      // `pnpm registry:copy`, run once from the built checkout to move a registry to PostgreSQL.
      "registry-copy": path.join(here, "src/db/registry-copy-main.ts"),
    },
    outdir,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // @corral/shared from its sources, as under tsx: no separate build of it to go stale.
    conditions: ["corral-source"],
    // better-sqlite3 finds its native addon from its own directory; Vite only serves `pnpm dev`.
    external: ["better-sqlite3", "vite"],
    // Bundled CommonJS packages still require() Node's built-ins and their optional add-ons.
    banner: { js: "import { createRequire as __corralRequire } from 'node:module'; const require = __corralRequire(import.meta.url);" },
    plugins: [englishZod, noSwaggerYaml],
    // V8 keeps a module's source for as long as it runs, as a two-byte string once one comment has a
    // non-ASCII character: without comments (licences go to each output's .LEGAL.txt) it is half the size.
    // Names stay, so stack traces still read; dist/*.map maps their positions back to src/.
    minifyWhitespace: true,
    legalComments: "external",
    sourcemap: "linked",
    logLevel: "warning",
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = path.join(here, "dist");
  rmSync(outdir, { recursive: true, force: true });
  await build(serverBuildOptions(outdir));
}
