// What `pnpm registry:copy` prints while it copies: each table's row count once it is copied, and
// on the way how far a long table has come — a line updated in place on a terminal, a plain line
// at most every second in a log file (where \r would pile up).
import type { TableCopied, TableProgress } from "./copy-to-postgres.js";

export const rowCount = (n: number) => `${n.toLocaleString("en-US")} row${n === 1 ? "" : "s"}`;

export interface CopyPrinterOptions {
  write: (text: string) => void;
  /** stdout is a terminal: the progress line is rewritten in place. */
  tty: boolean;
  /** Without a terminal, the least time between two lines (of any table). */
  everyMs?: number;
  now?: () => number;
}

/** Erases the rest of the line (a shorter line over a longer one). */
const CLEAR_TO_END = "\u001b[K";

export function copyPrinter({ write, tty, everyMs = 1000, now = () => performance.now() }: CopyPrinterOptions) {
  let lastLine = now();
  let inPlace = false;
  return {
    progress({ table, rows, of }: TableProgress): void {
      // The table's own line follows at once.
      if (rows >= of) return;
      const line = `  ${table}: ${rows.toLocaleString("en-US")} of ${rowCount(of)} (${Math.floor((rows / of) * 100)} %)`;
      if (tty) {
        write(`\r${line}${CLEAR_TO_END}`);
        inPlace = true;
      } else if (now() - lastLine >= everyMs) {
        write(`${line}\n`);
        lastLine = now();
      }
    },
    table({ table, rows }: TableCopied): void {
      write(`${inPlace ? "\r" : ""}  ${table}: ${rowCount(rows)}${inPlace ? CLEAR_TO_END : ""}\n`);
      inPlace = false;
      lastLine = now();
    },
    /** The copy ended (a failure too): a line left in place is ended, so what follows starts a line of its own. */
    done(): void {
      if (inPlace) write("\n");
      inPlace = false;
    },
  };
}
