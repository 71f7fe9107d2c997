// The conversations repository (the hub's agents and messages), the same cases against each dialect.
import { afterEach, describe, expect, test } from "vitest";
import { openPgDb } from "../pg/client.js";
import { postgresDialect } from "../dialects/postgres.js";
import { createConversationsRepo } from "../repos/conversations.js";
import type { NewHubMessage } from "../registry.js";
import type { HubAgentRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const message = (fields: Partial<NewHubMessage> & Pick<NewHubMessage, "from" | "to">): NewHubMessage => ({
  session: "s",
  text: "hi",
  jobId: null,
  at: 1_000,
  receivedAt: null,
  answerPending: false,
  ...fields,
});

const agent = (session: string, name: string, fields: Partial<Omit<HubAgentRow, "endedAt">> = {}): Omit<HubAgentRow, "endedAt"> => ({
  session,
  name,
  label: null,
  registeredAt: 10,
  lastSeenAt: 10,
  handleHash: `h-${session}-${name}`,
  leaseUntil: 100,
  targetUrl: null,
  targetSession: null,
  targetPassword: null,
  ...fields,
});
const NO_TARGET = { targetUrl: null, targetSession: null, targetPassword: null };

describe.each(DIALECTS)("conversations in $dialect", ({ open }) => {
  let reg: TestRegistry;
  afterEach(async () => {
    await reg?.close();
  });

  test("a name registers under a handle hash, re-registers with its new label, times and hash, and ends by its hash", async () => {
    reg = await open();
    const c = reg.conversations;
    await c.register(agent("s", "ann", { label: "first", lastSeenAt: 11, handleHash: "h-ann" }));
    await c.register(agent("s", "bob", { handleHash: "h-bob" }));
    await c.register(agent("t", "ann", { handleHash: "h-ann-t", registeredAt: 5 }));
    expect(await c.agent("s", "ann")).toEqual({
      session: "s",
      name: "ann",
      label: "first",
      registeredAt: 10,
      lastSeenAt: 11,
      endedAt: null,
      handleHash: "h-ann",
      leaseUntil: 100,
      ...NO_TARGET,
    });
    expect(await c.end("h-ann", 20)).toEqual({ session: "s", name: "ann" });
    expect(await c.agent("s", "ann")).toMatchObject({ endedAt: 20, lastSeenAt: 11, handleHash: null });
    // Ended once: the hash no longer ends anything, nor does one never given.
    expect(await c.end("h-ann", 21)).toBeUndefined();
    expect(await c.end("nobody", 1)).toBeUndefined();
    await c.register(agent("s", "ann", { label: "second", lastSeenAt: 1_800_000_000_000, handleHash: "h-ann-2", leaseUntil: 1_800_000_001_000 }));
    expect(await c.agent("s", "ann")).toEqual({
      session: "s",
      name: "ann",
      label: "second",
      registeredAt: 10,
      lastSeenAt: 1_800_000_000_000,
      endedAt: null,
      handleHash: "h-ann-2",
      leaseUntil: 1_800_000_001_000,
      ...NO_TARGET,
    });
    expect(await c.agent("u", "ann")).toBeUndefined();
    expect(await c.agentCount("s")).toBe(2);
    expect(await c.agentCount("none")).toBe(0);
  });

  test("a live target is stored with its registration, replaced by the next one, and gone when it ends or expires", async () => {
    reg = await open();
    const c = reg.conversations;
    const target = { targetUrl: "http://127.0.0.1:4096", targetSession: "ses_1", targetPassword: "pw" };
    await c.register(agent("s", "oc", { handleHash: "h-oc", leaseUntil: 100, ...target }));
    expect(await c.agent("s", "oc")).toMatchObject(target);
    // Registered again from a new port: the new address; again without a server: none.
    await c.register(agent("s", "oc", { handleHash: "h-oc-2", leaseUntil: 100, ...target, targetUrl: "http://127.0.0.1:4097" }));
    expect(await c.agent("s", "oc")).toMatchObject({ ...target, targetUrl: "http://127.0.0.1:4097" });
    await c.end("h-oc-2", 20);
    expect(await c.agent("s", "oc")).toMatchObject({ endedAt: 20, ...NO_TARGET });
    await c.register(agent("s", "oc", { handleHash: "h-oc-3", leaseUntil: 50, ...target }));
    await c.expire(60, 60);
    expect(await c.agent("s", "oc")).toMatchObject({ endedAt: 60, ...NO_TARGET });
  });

  test("a live target survives a touch while online and a renew, is dropped by a touch after a lapse, and lapses at once when its stream closes", async () => {
    reg = await open();
    const c = reg.conversations;
    const target = { targetUrl: "http://127.0.0.1:4096", targetSession: "ses_1", targetPassword: "pw" };
    await c.register(agent("s", "oc", { handleHash: "h-oc", lastSeenAt: 10, leaseUntil: 100, ...target }));
    expect(await c.touch("h-oc", 50, 150, 0)).toMatchObject({ leaseUntil: 150, ...target });
    // Its stream closed: offline now; a row without a target, or one offline already, is left as it is.
    expect(await c.lapseLive("h-oc", 60)).toBe(true);
    expect(await c.lapseLive("h-oc", 70)).toBe(false);
    expect(await c.agent("s", "oc")).toMatchObject({ leaseUntil: 60, ...target });
    // The same session's stream back: renewed with its target.
    await c.renew(["h-oc"], 80, 180);
    expect(await c.agent("s", "oc")).toMatchObject({ leaseUntil: 180, ...target });
    // Lapsed, then a call with the handle: online again, without the address.
    expect(await c.touch("h-oc", 200, 300, 0)).toMatchObject({ leaseUntil: 300, ...NO_TARGET });
    await c.register(agent("s", "plain", { handleHash: "h-plain", leaseUntil: 100 }));
    expect(await c.lapseLive("h-plain", 60)).toBe(false);
    expect(await c.agent("s", "plain")).toMatchObject({ leaseUntil: 100 });
  });

  test("a touch renews a handle still in use only (online or not); expiry ends the unused (and rows without a handle) once", async () => {
    reg = await open();
    const c = reg.conversations;
    // Handles unused since 30 end; presence (leaseUntil) says only whether one is online.
    await c.register(agent("s", "ann", { handleHash: "h-ann", lastSeenAt: 40, leaseUntil: 45 }));
    await c.register(agent("s", "bob", { handleHash: "h-bob", lastSeenAt: 20, leaseUntil: 50 }));
    await c.register(agent("t", "old", { handleHash: null, leaseUntil: null }));
    expect(await c.liveCount()).toBe(3);
    // ann is offline (its presence ran out at 45) but its handle lives: the touch brings it back.
    expect(await c.touch("h-ann", 60, 160, 30)).toMatchObject({ session: "s", name: "ann", lastSeenAt: 60, leaseUntil: 160 });
    // bob was last seen at 20: a touch at 60 with handles unused since 30 ended finds nothing, and moves nothing.
    expect(await c.touch("h-bob", 60, 160, 30)).toBeUndefined();
    expect(await c.agent("s", "bob")).toMatchObject({ lastSeenAt: 20, leaseUntil: 50, endedAt: null });
    expect(await c.touch("nobody", 60, 160, 30)).toBeUndefined();
    expect((await c.expire(60, 30)).map((r) => [r.session, r.name]).sort()).toEqual([
      ["s", "bob"],
      ["t", "old"],
    ]);
    expect(await c.expire(60, 30)).toEqual([]);
    expect(await c.liveCount()).toBe(1);
    expect(await c.agent("s", "bob")).toMatchObject({ endedAt: 60, handleHash: null });
    expect(await c.agent("s", "ann")).toMatchObject({ endedAt: null, handleHash: "h-ann" });
    // Ended by expiry: its hash no longer touches.
    expect(await c.touch("h-bob", 61, 200, 0)).toBeUndefined();
    expect((await c.agents("s")).map((a) => [a.name, a.endedAt])).toEqual([
      ["ann", null],
      ["bob", 60],
    ]);
  });

  test("renew moves presence of live handles in one write; lapsed lists who went offline in a window", async () => {
    reg = await open();
    const c = reg.conversations;
    await c.register(agent("s", "ann", { handleHash: "h-ann", leaseUntil: 100 }));
    await c.register(agent("s", "bob", { handleHash: "h-bob", leaseUntil: 100 }));
    await c.register(agent("t", "cy", { handleHash: "h-cy", leaseUntil: 70 }));
    await c.end("h-bob", 50);
    await c.renew(["h-ann", "h-bob", "nobody"], 90, 190);
    await c.renew([], 91, 191);
    expect(await c.agent("s", "ann")).toMatchObject({ lastSeenAt: 90, leaseUntil: 190 });
    // Ended: renewing its old hash moves nothing.
    expect(await c.agent("s", "bob")).toMatchObject({ lastSeenAt: 10, leaseUntil: 100, endedAt: 50 });
    expect((await c.lapsed(60, 100)).map((r) => [r.session, r.name])).toEqual([["t", "cy"]]);
    expect(await c.lapsed(70, 100)).toEqual([]);
    expect((await c.lapsed(100, 200)).map((r) => r.name)).toEqual(["ann"]);
  });

  test("two live registrations never share a handle hash", async () => {
    reg = await open();
    const c = reg.conversations;
    await c.register(agent("s", "ann", { handleHash: "same" }));
    await expect(c.register(agent("s", "bob", { handleHash: "same" }))).rejects.toThrow();
    // Ended rows keep no hash, so any number of them coexist.
    await c.end("same", 20);
    await c.register(agent("s", "bob", { handleHash: "other" }));
    await c.end("other", 21);
    expect((await c.agents("s")).map((a) => a.handleHash)).toEqual([null, null]);
  });

  test("agents are listed by registration time, then by name byte by byte", async () => {
    reg = await open();
    const c = reg.conversations;
    for (const name of ["b", "a", "B", "é", "A", "late"]) await c.register(agent("s", name, { registeredAt: name === "late" ? 2 : 1 }));
    expect((await c.agents("s")).map((a) => a.name)).toEqual(["A", "B", "a", "b", "é", "late"]);
    expect(await c.agents("none")).toEqual([]);
  });

  test("the longest-gone agent with nothing waiting for it is forgotten, one at a time", async () => {
    reg = await open();
    const c = reg.conversations;
    await c.register(agent("s", "live"));
    for (const [name, endedAt] of [
      ["waited", 5],
      ["zed", 10],
      ["amy", 10],
      ["newest", 20],
    ] as const) {
      await c.register(agent("s", name));
      await c.end(`h-s-${name}`, endedAt);
    }
    await c.insertMessage(message({ from: "live", to: "waited" }));
    // A message in another session does not keep a name of this one.
    await c.insertMessage(message({ session: "other", from: "x", to: "amy" }));
    const left = async () => (await c.agents("s")).map((a) => a.name).sort();
    expect(await c.forgetOldestIdle("s")).toBe(true);
    expect(await left()).toEqual(["live", "newest", "waited", "zed"]);
    expect(await c.forgetOldestIdle("s")).toBe(true);
    expect(await c.forgetOldestIdle("s")).toBe(true);
    expect(await left()).toEqual(["live", "waited"]);
    expect(await c.forgetOldestIdle("s")).toBe(false);
    expect(await c.forgetOldestIdle("none")).toBe(false);
  });

  test("a message is stored and read back as given; ids grow over the whole server", async () => {
    reg = await open();
    const c = reg.conversations;
    const first = await c.insertMessage(message({ from: "a", to: "b", text: "ü \"quoted\" 🚀 'x' %_", jobId: "j1", at: 1_800_000_000_001 }));
    const second = await c.insertMessage(message({ session: "t", from: "a", to: "b", answerPending: true }));
    expect(first).toEqual({
      id: 1,
      session: "s",
      from: "a",
      to: "b",
      text: "ü \"quoted\" 🚀 'x' %_",
      jobId: "j1",
      at: 1_800_000_000_001,
      receivedAt: null,
      answerPending: false,
    });
    expect(second).toMatchObject({ id: 2, session: "t", answerPending: true });
    expect(await c.read("s", undefined, 0, 10)).toEqual([first]);
  });

  test("an inbox is the unreceived messages to one name, oldest first, limited and counted", async () => {
    reg = await open();
    const c = reg.conversations;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await c.insertMessage(message({ from: "a", to: "b", text: `m${i}` }))).id);
    await c.insertMessage(message({ from: "b", to: "a" }));
    await c.insertMessage(message({ session: "t", from: "a", to: "b" }));
    expect((await c.inbox("s", "b", 3)).map((m) => m.text)).toEqual(["m0", "m1", "m2"]);
    expect(await c.inbox("s", "b", 0)).toEqual([]);
    expect(await c.inboxCount("s", "b")).toBe(5);
    await c.markReceived([ids[0]!, ids[2]!], 77);
    await c.markReceived([], 78);
    expect((await c.inbox("s", "b", 10)).map((m) => m.text)).toEqual(["m1", "m3", "m4"]);
    expect(await c.inboxCount("s", "b")).toBe(3);
    expect((await c.read("s", "b", 0, 1))[0]).toMatchObject({ text: "m0", receivedAt: 77 });
    expect(await c.inbox("none", "b", 10)).toEqual([]);
    expect(await c.inboxCount("s", "nobody")).toBe(0);
  });

  test("reading after a cursor: the session's messages, or one agent's sent and received, oldest first, limited", async () => {
    reg = await open();
    const c = reg.conversations;
    const pairs = [
      ["a", "b"],
      ["b", "a"],
      ["c", "b"],
      ["a", "c"],
      ["c", "c"],
      ["b", "c"],
      ["a", "a"],
    ];
    const stored = [];
    for (const [from, to] of pairs) stored.push(await c.insertMessage(message({ from: from!, to: to!, text: `${from}>${to}` })));
    await c.insertMessage(message({ session: "t", from: "a", to: "b" }));
    const texts = (rows: { text: string }[]) => rows.map((r) => r.text);
    expect(texts(await c.read("s", undefined, 0, 100))).toEqual(pairs.map(([f, t]) => `${f}>${t}`));
    expect(texts(await c.read("s", undefined, stored[4]!.id, 100))).toEqual(["b>c", "a>a"]);
    expect(texts(await c.read("s", "a", 0, 100))).toEqual(["a>b", "b>a", "a>c", "a>a"]);
    expect(texts(await c.read("s", "a", 0, 2))).toEqual(["a>b", "b>a"]);
    expect(texts(await c.read("s", "c", stored[2]!.id, 2))).toEqual(["a>c", "c>c"]);
    expect(texts(await c.read("s", "c", 0, 1))).toEqual(["c>b"]);
    expect(await c.read("s", "a", stored[6]!.id, 10)).toEqual([]);
    expect(await c.read("s", undefined, 0, 0)).toEqual([]);
    expect(await c.read("none", undefined, 0, 10)).toEqual([]);
  });

  test("the last job one name started with another, and the answers still to store", async () => {
    reg = await open();
    const c = reg.conversations;
    await c.insertMessage(message({ from: "a", to: "w", jobId: "j1" }));
    const pending = await c.insertMessage(message({ from: "a", to: "w", jobId: "j2", answerPending: true }));
    await c.insertMessage(message({ from: "a", to: "w" }));
    await c.insertMessage(message({ from: "w", to: "a", jobId: "j3" }));
    const other = await c.insertMessage(message({ session: "t", from: "a", to: "w", jobId: "j4", answerPending: true }));
    expect(await c.lastJob("s", "a", "w")).toBe("j2");
    expect(await c.lastJob("s", "w", "a")).toBe("j3");
    expect(await c.lastJob("s", "a", "x")).toBeNull();
    expect((await c.pendingAnswers()).map((m) => m.id)).toEqual([pending.id, other.id]);
    await c.settleAnswer(pending.id);
    await c.settleAnswer(9_999);
    expect((await c.pendingAnswers()).map((m) => m.id)).toEqual([other.id]);
  });

  test("sessions: names (those live at the time online) and message counts with the latest message time, those with names first", async () => {
    reg = await open();
    const c = reg.conversations;
    expect(await c.sessions(1)).toEqual([]);
    await c.register(agent("b", "x"));
    await c.register(agent("b", "y", { leaseUntil: 200 }));
    await c.register(agent("B", "x"));
    await c.end("h-B-x", 20);
    await c.insertMessage(message({ session: "b", from: "x", to: "y", at: 5 }));
    await c.insertMessage(message({ session: "b", from: "y", to: "x", at: 1_800_000_000_000 }));
    await c.insertMessage(message({ session: "a", from: "x", to: "y", at: 3 }));
    expect(await c.sessions(150)).toEqual([
      { name: "B", agents: 1, online: 0, messages: 0, lastMessageAt: null },
      { name: "b", agents: 2, online: 1, messages: 2, lastMessageAt: 1_800_000_000_000 },
      { name: "a", agents: 0, online: 0, messages: 1, lastMessageAt: 3 },
    ]);
    expect((await c.sessions(50)).find((s) => s.name === "b")?.online).toBe(2);
  });
});

describe.runIf(DIALECTS.some((d) => d.dialect === "PostgreSQL"))("messages in PostgreSQL, sent from several connections at once", () => {
  test("a reader following the cursor sees every message exactly once, in id order", async () => {
    const reg = await DIALECTS.find((d) => d.dialect === "PostgreSQL")!.open();
    const writers = await Promise.all(Array.from({ length: 6 }, () => openPgDb(reg.url!, { max: 1 })));
    try {
      const PER_WRITER = 30;
      let writing = true;
      const seen: number[] = [];
      const reader = (async () => {
        let cursor = 0;
        for (;;) {
          const done = !writing;
          const rows = await reg.conversations.read("s", undefined, cursor, 50);
          for (const row of rows) seen.push(row.id);
          cursor = rows.at(-1)?.id ?? cursor;
          if (done && rows.length === 0) return;
        }
      })();
      await Promise.all(
        writers.map(async (w, k) => {
          for (let i = 0; i < PER_WRITER; i++) {
            // In a transaction that lasts a moment after its insert, as the hub's do (a message and its job together).
            await w.db.transaction(async (tx) => {
              await createConversationsRepo(postgresDialect(tx)).insertMessage(message({ from: `w${k}`, to: "r", text: `${i}` }));
              await new Promise((r) => setTimeout(r, (i * 7 + k * 3) % 5));
            });
          }
        }),
      );
      writing = false;
      await reader;
      expect(seen).toHaveLength(writers.length * PER_WRITER);
      expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    } finally {
      await Promise.all(writers.map((w) => w.close()));
      await reg.close();
    }
  });
});
