import { describe, expect, it } from "vitest";
import { copyPrinter } from "./copy-progress.js";

function printed(tty: boolean) {
  let out = "";
  let clock = 0;
  const printer = copyPrinter({ write: (text) => (out += text), tty, everyMs: 1000, now: () => clock });
  return { printer, out: () => out, at: (ms: number) => (clock = ms) };
}

describe("what pnpm registry:copy prints", () => {
  it("rewrites one line in place on a terminal, then ends it with the table's count", () => {
    const { printer, out } = printed(true);
    printer.table({ table: "agents", rows: 1 });
    printer.progress({ table: "jobs", rows: 1500, of: 100_000 });
    printer.progress({ table: "jobs", rows: 3000, of: 100_000 });
    printer.progress({ table: "jobs", rows: 100_000, of: 100_000 });
    printer.table({ table: "jobs", rows: 100_000 });
    printer.table({ table: "budgets", rows: 0 });
    printer.done();
    expect(out()).toBe(
      "  agents: 1 row\n" +
        "\r  jobs: 1,500 of 100,000 rows (1 %)\u001b[K" +
        "\r  jobs: 3,000 of 100,000 rows (3 %)\u001b[K" +
        "\r  jobs: 100,000 rows\u001b[K\n" +
        "  budgets: 0 rows\n",
    );
  });

  it("ends a line left in place when the copy fails, so the error starts a line of its own", () => {
    const { printer, out } = printed(true);
    printer.progress({ table: "jobs", rows: 1500, of: 4000 });
    printer.done();
    expect(out()).toBe("\r  jobs: 1,500 of 4,000 rows (37 %)\u001b[K\n");
  });

  it("prints plain lines at most every second without a terminal (a log file)", () => {
    const { printer, out, at } = printed(false);
    at(500);
    printer.table({ table: "agents", rows: 7 });
    at(900);
    printer.progress({ table: "jobs", rows: 1500, of: 10_000 });
    at(1600);
    printer.progress({ table: "jobs", rows: 3000, of: 10_000 });
    at(2000);
    printer.progress({ table: "jobs", rows: 4500, of: 10_000 });
    at(2600);
    printer.progress({ table: "jobs", rows: 6000, of: 10_000 });
    at(2700);
    printer.progress({ table: "jobs", rows: 10_000, of: 10_000 });
    printer.table({ table: "jobs", rows: 10_000 });
    // A table copied within the second prints its count alone.
    at(3000);
    printer.progress({ table: "job_attempts", rows: 2000, of: 2500 });
    printer.table({ table: "job_attempts", rows: 2500 });
    printer.done();
    expect(out()).toBe(
      "  agents: 7 rows\n" +
        "  jobs: 3,000 of 10,000 rows (30 %)\n" +
        "  jobs: 6,000 of 10,000 rows (60 %)\n" +
        "  jobs: 10,000 rows\n" +
        "  job_attempts: 2,500 rows\n",
    );
  });
});
