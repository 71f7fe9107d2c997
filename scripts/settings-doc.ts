// `pnpm docs:settings`: writes the settings table of docs/settings.md from the settings schemas
// (their .describe() texts), between its markers; test/docs.test.ts fails when it is out of date.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withSettingsTable } from "../apps/server/src/settings-doc.js";

const file = fileURLToPath(new URL("../docs/settings.md", import.meta.url));
const before = readFileSync(file, "utf8");
const after = withSettingsTable(before);
if (after === before) {
  console.log("docs/settings.md: the settings table is up to date");
} else {
  writeFileSync(file, after);
  console.log("docs/settings.md: the settings table was written");
}
