import type { ConversationStore, TurnMessage } from "./types.js";

/**
 * A worker's messages stored in the order it sends them, without holding up its loop; `stored`
 * waits for them all and throws what a write threw.
 */
export function conversationRecorder(
  conversations: ConversationStore,
  jobId: string,
): { record(message: TurnMessage): void; stored(): Promise<void> } {
  let seq = 0;
  let writes = Promise.resolve();
  let failure: { err: unknown } | null = null;
  return {
    record(message) {
      const n = seq++;
      writes = writes
        .then(() => conversations.append(jobId, n, message))
        .catch((err: unknown) => {
          failure ??= { err };
        });
    },
    async stored() {
      await writes;
      if (failure) throw failure.err;
    },
  };
}
