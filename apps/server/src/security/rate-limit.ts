/** Addresses tracked at most; past this, expired entries go first, then the oldest. */
const MAX_TRACKED = 10_000;

interface Failures {
  count: number;
  windowStart: number;
  blockedUntil: number;
}

/**
 * Wrong tokens per remote address. After `limit` failures inside `windowMs` the address is
 * blocked for `windowMs`: its wrong tokens get 429. The guard checks the right token first and
 * never asks the limiter about it, so nobody — a web page firing `?token=x` images, another local
 * process — can lock the owner out (on loopback every local client shares one address). The
 * price: a blocked guesser still learns when a guess is right, so the limiter quiets noise and
 * misconfigured clients, and the token's length is what defeats guessing. Memory is bounded.
 */
export class FailedAuthLimiter {
  private byAddress = new Map<string, Failures>();
  /** Wrong tokens seen since start, for /metrics. */
  failuresTotal = 0;
  rejectedTotal = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the address may try again, or 0 when it is not blocked. */
  retryAfterS(address: string): number {
    const entry = this.byAddress.get(address);
    const left = entry ? entry.blockedUntil - this.now() : 0;
    if (left <= 0) return 0;
    this.rejectedTotal++;
    return Math.ceil(left / 1000);
  }

  recordFailure(address: string): void {
    this.failuresTotal++;
    const now = this.now();
    let entry = this.byAddress.get(address);
    if (!entry || (now - entry.windowStart > this.windowMs && entry.blockedUntil <= now)) {
      entry = { count: 0, windowStart: now, blockedUntil: 0 };
      this.byAddress.delete(address);
      this.makeRoom(now);
      this.byAddress.set(address, entry);
    }
    entry.count++;
    if (entry.count >= this.limit) entry.blockedUntil = now + this.windowMs;
  }

  get tracked(): number {
    return this.byAddress.size;
  }

  private makeRoom(now: number): void {
    if (this.byAddress.size < MAX_TRACKED) return;
    for (const [address, entry] of this.byAddress) {
      if (now - entry.windowStart > this.windowMs && entry.blockedUntil <= now) this.byAddress.delete(address);
    }
    // Still full of live entries: drop the oldest (Map keeps insertion order).
    while (this.byAddress.size >= MAX_TRACKED) {
      const oldest = this.byAddress.keys().next().value;
      if (oldest === undefined) break;
      this.byAddress.delete(oldest);
    }
  }
}
