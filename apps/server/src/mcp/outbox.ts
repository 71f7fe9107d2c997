import type { ServerResponse } from "node:http";

/**
 * The MCP answers written but not yet taken by the kernel, over every session and 2026-07-28
 * request (mcp/web-response.ts): what clients that do not read make the server hold. Past
 * `maxBytes` the responses that have held theirs longest are dropped (their connections closed),
 * so a client that never reads costs the server at most its share of the cap and never the
 * server's heap.
 */
export class McpOutbox {
  /** Responses that held unsent bytes after a write, oldest first. */
  private held = new Set<ServerResponse>();
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes held now, and connections dropped since start. */
  stats(): { heldBytes: number; dropped: number } {
    return { heldBytes: this.heldBytes(), dropped: this.dropped };
  }

  /** Call after each write to `res`: holds it while the kernel has not taken all of it. */
  wrote(res: ServerResponse): void {
    if (res.destroyed || res.writableLength === 0) return;
    if (!this.held.has(res)) {
      this.held.add(res);
      res.once("close", () => this.held.delete(res));
    }
    this.trim();
  }

  private heldBytes(): number {
    let total = 0;
    for (const res of this.held) {
      // Drained since: no longer held until its next write.
      if (res.writableLength === 0) this.held.delete(res);
      else total += res.writableLength;
    }
    return total;
  }

  private trim(): void {
    let total = this.heldBytes();
    for (const res of this.held) {
      if (total <= this.maxBytes) return;
      total -= res.writableLength;
      this.held.delete(res);
      this.dropped++;
      res.destroy();
    }
  }
}
