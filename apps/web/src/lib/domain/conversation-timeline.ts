import type { HubAgent, HubMessage } from "@corral/shared";

/** Messages a page keeps of one session; older ones drop off the top (the REST API still has them). */
export const TIMELINE_LIMIT = 500;

export interface Timeline {
  messages: HubMessage[];
  /** The last message's id: where a resubscription resumes. */
  cursor: number;
  /** Older messages no longer held. */
  dropped: number;
}

export const emptyTimeline = (): Timeline => ({ messages: [], cursor: 0, dropped: 0 });

/** Adds a message after the ones held; a message already held (a replay after a reconnect) changes nothing. */
export function appendMessage(timeline: Timeline, message: HubMessage): Timeline {
  if (message.id <= timeline.cursor) return timeline;
  const messages = [...timeline.messages, message];
  const over = Math.max(0, messages.length - TIMELINE_LIMIT);
  return { messages: over ? messages.slice(over) : messages, cursor: message.id, dropped: timeline.dropped + over };
}

/** How the timeline words a message's job: a message a worker ran, or a worker's answer. */
export function jobRole(message: HubMessage, agents: HubAgent[]): "ran" | "answer" | null {
  if (!message.jobId) return null;
  return agents.some((a) => a.name === message.from && a.kind === "worker") ? "answer" : "ran";
}
