import { createHash, randomBytes } from "node:crypto";
import type { BrowserSession } from "@corral/shared";
import type { BrowserSessionRow } from "../db/schema.js";
import type { Registry } from "../db/registry.js";

/** Signed-in browsers kept at most; past it the least recently seen one is signed out. */
const MAX_SESSIONS = 200;
/** A session's last use is written at most this often (every request would be a write). */
const TOUCH_EVERY_MS = 60_000;
/** What a user agent string is cut to before it is stored. */
const USER_AGENT_MAX = 300;

const hashOf = (secret: string) => createHash("sha256").update(secret).digest("hex");

/**
 * The panel's sign-in: trading the token for a random secret that only this browser holds. The
 * registry keeps its hash, so a copy of the database signs nobody in; each session expires after
 * `ttlMs` without use, and can be signed out alone or all at once from the Connect page.
 */
export class SessionService {
  /**
   * Browsers send a cookie to every port of a host, so the name is this server's own (from its
   * data dir): two Corrals on one machine keep their sessions apart.
   */
  readonly cookieName: string;

  constructor(
    private readonly registry: Pick<Registry, "sessions" | "transaction">,
    dataDir: string,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.cookieName = `corral_session_${createHash("sha256").update(dataDir).digest("hex").slice(0, 12)}`;
  }

  /** How the session cookie is set: script-proof, same-site only, as long as the session lasts. */
  cookieOptions(): { httpOnly: true; sameSite: "strict"; path: "/"; maxAge: number } {
    return { httpOnly: true, sameSite: "strict", path: "/", maxAge: Math.floor(this.ttlMs / 1000) };
  }

  /** Counted and stored in one transaction, so sign-ins at once never keep more than MAX_SESSIONS. */
  async create(userAgent: string): Promise<{ id: string; secret: string }> {
    const now = this.now();
    const id = randomBytes(9).toString("base64url");
    const secret = randomBytes(32).toString("base64url");
    await this.registry.transaction(async ({ sessions }) => {
      await sessions.removeExpired(now);
      const live = await sessions.listLive(now);
      for (const old of live.slice(MAX_SESSIONS - 1)) await sessions.remove(old.id);
      await sessions.insert({
        id,
        secretHash: hashOf(secret),
        userAgent: userAgent.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, USER_AGENT_MAX),
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + this.ttlMs,
      });
    });
    return { id, secret };
  }

  /**
   * The live session this secret opens, null if none. Its expiry is pushed back (at most once a
   * minute); `renewed` says so, for the cookie's own lifetime to follow.
   */
  async verify(secret: string): Promise<{ session: BrowserSessionRow; renewed: boolean } | null> {
    const now = this.now();
    const session = await this.registry.sessions.findLive(hashOf(secret), now);
    if (!session) return null;
    const renewed = now - session.lastSeenAt >= TOUCH_EVERY_MS;
    if (renewed) await this.registry.sessions.touch(session.id, now, now + this.ttlMs);
    return { session, renewed };
  }

  async list(currentId: string | null): Promise<BrowserSession[]> {
    return (await this.registry.sessions.listLive(this.now())).map(({ secretHash: _secret, ...row }) => ({ ...row, current: row.id === currentId }));
  }

  revoke(id: string): Promise<boolean> {
    return this.registry.sessions.remove(id);
  }

  revokeAll(): Promise<number> {
    return this.registry.sessions.removeAll();
  }
}
