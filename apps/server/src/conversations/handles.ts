import { createHash, randomBytes } from "node:crypto";

/** Random bytes in a handle: not guessable, and nothing about the registration derives it. */
const HANDLE_BYTES = 32;

/** What the registry keeps of a handle: a row read out of the database does not give the handle back. */
export const handleHash = (handle: string): string => createHash("sha256").update(handle).digest("hex");

/** A new registration's handle (base64url) and its hash. */
export function mintHandle(): { handle: string; hash: string } {
  const handle = randomBytes(HANDLE_BYTES).toString("base64url");
  return { handle, hash: handleHash(handle) };
}
