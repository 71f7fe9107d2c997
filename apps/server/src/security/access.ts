import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * What a route lets through without credentials. `public`: anyone (readiness). `page`: the
 * panel's own files, which hold no data; a `?token=` on a page URL is traded for a session.
 * A route that declares nothing needs credentials: protection is decided from the route that
 * matched, never from the URL string, so no spelling of a path can change it.
 */
export type RouteAccess = "public" | "page";

declare module "fastify" {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export type AccessDecision = RouteAccess | "credentials";

/** Route options that make a route public. */
export const publicRoute = { config: { access: "public" as const } };

export function accessOf(request: FastifyRequest): AccessDecision {
  // Nothing matched: the not-found handler answers, and it serves the panel's page or a 404.
  if (request.is404) return "page";
  return request.routeOptions.config.access ?? "credentials";
}

/** Marks every route registered in this (encapsulated) context as a panel page. */
export function declarePages(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    route.config = { ...route.config, access: "page" };
  });
}

export interface RouteEntry {
  method: string;
  url: string;
  access: AccessDecision;
}

/**
 * Every route with the decision it declared, read once the app is ready: hooks of nested
 * contexts (declarePages) run after this one, so decisions are read from the final options.
 */
export function collectRoutes(app: FastifyInstance): () => RouteEntry[] {
  const options: { method: string | string[]; url: string; config?: { access?: RouteAccess } }[] = [];
  app.addHook("onRoute", (route) => void options.push(route));
  return () =>
    options.flatMap((route) =>
      (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({
        method,
        url: route.url,
        access: route.config?.access ?? ("credentials" as const),
      })),
    );
}
