// The settings table of docs/settings.md, written from the schemas that read the environment, so
// the table cannot drift from the code: `pnpm docs:settings` writes it, test/docs.test.ts checks it.
import { z } from "zod";
import { CliEnvSchema } from "./cli/settings.js";
import { BinOverrideSetting, EnvSchema } from "./config.js";
import { RunnerEnvSchema } from "./runner/settings.js";

export const SETTINGS_START =
  "<!-- settings:start — written by `pnpm docs:settings` from the .describe() texts of the settings schemas; edit those, not this table -->";
export const SETTINGS_END = "<!-- settings:end -->";

interface SettingRow {
  variable: string;
  schema: z.ZodType;
}

/** Every setting, in the order the table lists them: the server's, then the command's and the runner's own. */
export function settingRows(): SettingRow[] {
  const keyed = (shape: Record<string, z.ZodType>) =>
    Object.entries(shape)
      .filter(([variable]) => variable.startsWith("CORRAL_"))
      .map(([variable, schema]) => ({ variable, schema }));
  return [
    ...keyed(EnvSchema.shape),
    { variable: BinOverrideSetting.variable, schema: BinOverrideSetting.schema },
    ...keyed(CliEnvSchema.shape),
    ...keyed(RunnerEnvSchema.shape),
  ];
}

/** The markdown table, header included. */
export function settingsTable(): string {
  const lines = ["| variable | default | what it does |", "| --- | --- | --- |"];
  for (const { variable, schema } of settingRows()) {
    const description = schema.description;
    if (!description) throw new Error(`${variable} has no .describe() text: give its schema one, it is what docs/settings.md says of it`);
    const said = [description, rangeOf(schema)].filter(Boolean).join(" ");
    lines.push(`| \`${variable}\` | ${cell(defaultOf(schema))} | ${cell(said)} |`);
  }
  return lines.join("\n");
}

/** The document with the table between its markers replaced by the current one. */
export function withSettingsTable(doc: string): string {
  const start = doc.indexOf(SETTINGS_START);
  const end = doc.indexOf(SETTINGS_END);
  if (start < 0 || end < start) {
    throw new Error(`docs/settings.md must hold the lines ${SETTINGS_START} and ${SETTINGS_END}, in that order: the table goes between them`);
  }
  return `${doc.slice(0, start + SETTINGS_START.length)}\n${settingsTable()}\n${doc.slice(end)}`;
}

const MIB = 1024 * 1024;

function defaultOf(schema: z.ZodType): string {
  const shown = schema.meta()?.defaultText;
  if (typeof shown === "string") return shown;
  if (!(schema instanceof z.ZodDefault)) return "none";
  const value: unknown = schema.def.defaultValue;
  if (Array.isArray(value) && value.length === 0) return "none";
  if (typeof value === "number" && value >= MIB && value % MIB === 0) return `\`${value}\` (${value / MIB} MiB)`;
  return `\`${String(value)}\``;
}

/** The bounds a number setting is checked against, when they say more than "a positive whole number". */
function rangeOf(schema: z.ZodType): string {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodNumber)) return "";
  const { minValue, maxValue } = inner;
  if (maxValue !== null && maxValue < Number.MAX_SAFE_INTEGER) return `${minValue} to ${maxValue}.`;
  if (minValue !== null && minValue > 1) return `At least ${minValue}.`;
  return "";
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
