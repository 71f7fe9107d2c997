import type { Job, JobStatus } from "@corral/shared";
import { expect, test } from "vitest";
import { JobEvents } from "./job-events.js";
import { JobWaits } from "./waits.js";

const job = (status: JobStatus) => ({ id: "a", status }) as Job;

test("a job that ends while it is first read is answered as ended, not as the state read before its end", async () => {
  const events = new JobEvents();
  let stored = job("queued");
  const jobs = {
    // The read sees the row as it was; its end is stored and told before the read comes back
    // (two queries in flight on a database, as PostgreSQL's pool has them).
    async get() {
      const seen = stored;
      stored = job("failed");
      events.emit("job", stored);
      return seen;
    },
  };
  const [answer] = await new JobWaits(events, jobs).waitFor(["a"], 60_000);
  expect(answer?.status).toBe("failed");
});

test("a job that ends later is read once it is told, and one that does not end is read at the timeout", async () => {
  const events = new JobEvents();
  let stored = job("running");
  const waits = new JobWaits(events, { get: async () => stored });
  const ending = waits.waitFor(["a"], 60_000);
  await new Promise((resolve) => setImmediate(resolve));
  stored = job("succeeded");
  events.emit("job", stored);
  expect((await ending)[0]?.status).toBe("succeeded");
  stored = job("running");
  expect((await waits.waitFor(["a"], 10))[0]?.status).toBe("running");
});
