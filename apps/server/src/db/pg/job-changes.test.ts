import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgres } from "../../../test/postgres.js";
import { CANCEL_CHANNEL, type ChannelListener, LISTEN_APPLICATION, listen, QUEUE_CHANNEL, REQUEST_CHANNEL } from "./job-changes.js";

const postgres = usePostgres();

describe.skipIf(!postgres.available)("listening for notifications", () => {
  const opened: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const one of opened.splice(0).reverse()) await one.close();
  });

  it("hears several channels on one connection, each with its handler, and all of them again once that connection is killed", async () => {
    const url = await postgres.database();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    opened.push({ close: () => db.end() });
    const channels = [CANCEL_CHANNEL, REQUEST_CHANNEL, QUEUE_CHANNEL];
    const heard: string[] = [];
    const errors: Error[] = [];
    const listener: ChannelListener = await listen(
      url,
      Object.fromEntries(channels.map((channel) => [channel, (payload: string) => heard.push(`${channel} ${payload}`)])),
      (err) => errors.push(err),
    );
    opened.push(listener);
    const listening = async () =>
      (
        await db.query<{ pid: number }>("select pid from pg_stat_activity where application_name = $1 and datname = current_database()", [
          LISTEN_APPLICATION,
        ])
      ).rows.map((r) => r.pid);
    /** Notifies every channel with `payload` until each handler has heard it (a reconnect LISTENs again after a pause). */
    const heardOnEach = async (payload: string) => {
      const deadline = Date.now() + 10_000;
      const missing = () => channels.filter((channel) => !heard.includes(`${channel} ${payload}`));
      while (missing().length) {
        if (Date.now() > deadline) throw new Error(`not heard on ${missing().join(", ")}`);
        for (const channel of missing()) await db.query("select pg_notify($1, $2)", [channel, payload]);
        await sleep(100);
      }
    };

    const [first, ...others] = await listening();
    expect(others).toEqual([]);
    await heardOnEach("before");
    // Each handler got its own channel's payloads only, and a channel nobody listens on is not heard.
    await db.query("select pg_notify('corral_job', 'elsewhere')");
    await heardOnEach("once more");
    expect(heard.filter((h) => h.includes("elsewhere"))).toEqual([]);

    await db.query("select pg_terminate_backend($1)", [first]);
    await heardOnEach("after");
    expect(errors.length).toBeGreaterThan(0);
    const again = await listening();
    expect(again).toHaveLength(1);
    expect(again[0]).not.toBe(first);

    await listener.close();
    // The backend may outlive the client's end by a moment.
    const deadline = Date.now() + 5000;
    while ((await listening()).length && Date.now() < deadline) await sleep(50);
    expect(await listening()).toEqual([]);
  });
});
