import type { ApiError } from "@corral/shared";
import { existsSync } from "node:fs";
import type { Server } from "node:http";
import path from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppConfig } from "../config.js";
import { registerDevWeb } from "../dev-web.js";
import { installRoot } from "../lib/install-root.js";
import { declarePages } from "../security/access.js";
import { allowedHostNames } from "../security/guard.js";

/** The built panel. */
const webDist = path.join(installRoot, "apps/web/dist");

/** Hashed by the build (`apps/web/dist/assets/`): a changed file gets a new name, so a copy never goes stale. */
const ASSETS_DIR = path.join(webDist, "assets") + path.sep;

/**
 * Hashed assets are cached for a year without asking again; everything else (index.html, which
 * names the current assets) is revalidated on each use against its ETag and Last-Modified.
 */
export function panelCacheControl(file: string): string {
  return file.startsWith(ASSETS_DIR) ? "public, max-age=31536000, immutable" : "no-cache";
}

/**
 * Paths that belong to the API or to clients' discovery: an unknown one is a JSON 404, never the
 * panel's page (an MCP client reading `/.well-known/oauth-protected-resource` must not parse HTML).
 */
const API_PATH = /^\/(api|mcp|metrics|\.well-known)(\/|$)/;

/**
 * Where an MCP client without the token looks for OAuth: the discovery documents, then the
 * endpoints the MCP spec lets it assume when they are missing (Claude Code 2.1.332 POSTs
 * `/register`). Each answers that Corral takes a Bearer token instead, which the client shows.
 */
const OAUTH_PATH = /^\/(\.well-known\/(oauth-|openid-)|(register|authorize|token)\/?$)/;

/**
 * A path whose last part names a file (`/favicon.ico`, `/robots.txt`): one the build has not is a
 * 404, never the panel's page. Not under `pnpm dev`, where Vite answers such paths (`/src/main.tsx`).
 */
const FILE_PATH = /\/[^/]*\.[a-z0-9]+$/i;

/**
 * The control panel: its built files (or Vite serving the sources, under `pnpm dev`), and its
 * page for any other GET so that deep links work. All of it is declared a page: it holds no data,
 * and a `?token=` on it signs the browser in (security/guard.ts).
 */
export function panelRoutes(config: AppConfig, hmrUpgrades: Server) {
  return async (app: FastifyInstance) => {
    declarePages(app);
    let page: ((request: FastifyRequest, reply: FastifyReply) => unknown) | null = null;
    if (config.devWeb) {
      page = await registerDevWeb(app, hmrUpgrades, allowedHostNames(config));
    } else if (existsSync(webDist)) {
      // The build writes `.br` and `.gz` beside each asset (apps/web/build/precompress.ts); they are
      // chosen by Accept-Encoding, never routes of their own.
      await app.register(fastifyStatic, {
        root: webDist,
        wildcard: false,
        preCompressed: true,
        globIgnore: ["**/*.br", "**/*.gz"],
        cacheControl: false,
        setHeaders: (reply, file) => reply.header("cache-control", panelCacheControl(file)),
      });
      page = (_request, reply) => reply.sendFile("index.html");
    }
    app.setNotFoundHandler((request, reply) => {
      const pathname = request.url.split("?")[0] ?? "";
      if (
        page &&
        (request.method === "GET" || request.method === "HEAD") &&
        !API_PATH.test(pathname) &&
        !OAUTH_PATH.test(pathname) &&
        (config.devWeb || !FILE_PATH.test(pathname))
      )
        return page(request, reply);
      const error = OAUTH_PATH.test(pathname)
        ? 'Corral does not use OAuth: send the header Authorization: Bearer <token> (the token is printed at startup and kept in the data dir\'s token file; with Claude Code: claude mcp add --transport http corral <url> --header "Authorization: Bearer <token>")'
        : `no route ${request.method} ${pathname}`;
      return reply.code(404).send({ error, code: "not_found" } satisfies ApiError);
    });
  };
}
