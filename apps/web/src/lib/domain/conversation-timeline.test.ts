import type { HubAgent, HubMessage } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { appendMessage, emptyTimeline, jobRole, TIMELINE_LIMIT } from "./conversation-timeline.js";

const message = (id: number, extra: Partial<HubMessage> = {}): HubMessage => ({
  id,
  session: "review",
  from: "alice",
  to: "bob",
  text: `m${id}`,
  jobId: null,
  at: id,
  ...extra,
});

describe("a conversation's timeline", () => {
  it("keeps messages in order, ignores a replayed one, and holds at most its limit", () => {
    let t = emptyTimeline();
    t = appendMessage(t, message(1));
    t = appendMessage(t, message(2));
    expect(appendMessage(t, message(2))).toBe(t);
    for (let id = 3; id <= TIMELINE_LIMIT + 10; id++) t = appendMessage(t, message(id));
    expect(t.messages).toHaveLength(TIMELINE_LIMIT);
    expect(t.messages[0]?.id).toBe(11);
    expect(t).toMatchObject({ cursor: TIMELINE_LIMIT + 10, dropped: 10 });
  });

  it("tells a message a worker ran from a worker's answer", () => {
    const agents: HubAgent[] = [
      { session: "review", name: "gemini", kind: "worker", label: null, online: true, registeredAt: null, lastSeenAt: null, liveAt: null },
    ];
    expect(jobRole(message(1, { to: "gemini", jobId: "abc123" }), agents)).toBe("ran");
    expect(jobRole(message(2, { from: "gemini", to: "alice", jobId: "abc123" }), agents)).toBe("answer");
    expect(jobRole(message(3), agents)).toBeNull();
  });
});
