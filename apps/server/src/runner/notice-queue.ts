/**
 * Notices read one at a time in the order heard, each distinct payload queued once. A reading
 * reads the registry as it is then, so a payload heard again before its first reading has begun
 * is the same news; a login that NOTIFYs in a loop queues each distinct payload once. Past `max`
 * distinct payloads waiting (a flood of made-up ids: a live runner has a few jobs) new ones are
 * dropped, and `onDrop` says how many so far.
 */
export function noticeQueue(
  read: (payload: string) => Promise<void>,
  { max, onError, onDrop }: { max: number; onError: (err: unknown, payload: string) => void; onDrop: (dropped: number) => void },
): (payload: string) => void {
  let chain: Promise<void> = Promise.resolve();
  const waiting = new Set<string>();
  let dropped = 0;
  return (payload) => {
    if (waiting.has(payload)) return;
    if (waiting.size >= max) {
      onDrop(++dropped);
      return;
    }
    waiting.add(payload);
    chain = chain
      .then(() => {
        waiting.delete(payload);
        return read(payload);
      })
      .catch((err: unknown) => onError(err, payload));
  };
}
