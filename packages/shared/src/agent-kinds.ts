import { z } from "zod";
import { CreateAgentBodySchema } from "./agents.js";
import { AgentKindSchema } from "./enums.js";

/** A setting an agent form can ask for: a field of the body that creates an agent. */
export const AgentFieldNameSchema = CreateAgentBodySchema.keyof();
export type AgentFieldName = z.infer<typeof AgentFieldNameSchema>;

const ChoiceSchema = z.object({ value: z.string(), label: z.string() });
export type AgentFieldChoice = z.infer<typeof ChoiceSchema>;

/**
 * How the panel asks for a field's value, and so what it sends: `text` is trimmed, `number` is a
 * whole number, `multiline` is text over several lines, `select` one of its options, `checklist`
 * any of its options (a list, in the options' order), `list` a list of strings (one per line, or
 * for `words` split at spaces and commas too), `env` a map of variables written KEY=VALUE per line,
 * `toggle` a checkbox that sends true or false (never empty; unticked by default).
 */
export const AgentFieldInputSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("number") }),
  z.object({ type: z.literal("multiline"), rows: z.number().int().min(1) }),
  z.object({ type: z.literal("select"), options: z.array(ChoiceSchema).min(1) }),
  z.object({ type: z.literal("checklist"), options: z.array(ChoiceSchema).min(1) }),
  z.object({ type: z.literal("list"), rows: z.number().int().min(1), split: z.enum(["lines", "words"]), mono: z.boolean() }),
  z.object({ type: z.literal("env"), rows: z.number().int().min(1) }),
  z.object({ type: z.literal("toggle") }),
]);
export type AgentFieldInput = z.infer<typeof AgentFieldInputSchema>;

/**
 * One setting of an agent of a kind, as its kind module declares it: what the panel renders in
 * the create and edit forms, and what the server checks as agents are created and changed.
 */
export const AgentFieldSchema = z.object({
  name: AgentFieldNameSchema,
  label: z.string().min(1),
  hint: z.string().nullable(),
  input: AgentFieldInputSchema,
  /**
   * Why an agent of the kind cannot do without the field, said (naming the field) when it is
   * left empty: the server refuses such an agent with a 400, and the panel says it before
   * sending. Null: the field may stay empty.
   */
  required: z.string().nullable(),
  /**
   * The field names the variable of the server's environment that holds a secret (an API key):
   * the secret itself is never stored, answered or shown, only the variable's name.
   */
  secret: z.boolean(),
  /**
   * What an empty field sends: `default` null (the agent's default; a new agent leaves it out),
   * `unchanged` nothing (an edit keeps the value, a new agent gets Corral's default), `blank`
   * the empty value itself ("", [], {}).
   */
  whenEmpty: z.enum(["default", "unchanged", "blank"]),
  /** A new agent's form starts with this value; null: empty. */
  default: z.union([z.string(), z.array(z.string())]).nullable(),
  /** Set when an agent is added, never changed (its name): the edit form leaves it out. */
  createOnly: z.boolean(),
  /** Shown only while this other field's list includes the value (the hosts of the http_get tool); null: always shown. */
  shownWhen: z.object({ field: AgentFieldNameSchema, includes: z.string() }).nullable(),
  /** Takes the form's whole width instead of a cell of its grid. */
  wide: z.boolean(),
});
export type AgentField = z.infer<typeof AgentFieldSchema>;

/** Everything the panel knows of an agent kind: its form, and what it can do. */
export const AgentKindDescriptorSchema = z.object({
  kind: AgentKindSchema,
  /** The panel's Add dialog for agents of the kind; null: they are added through REST or the config file only. */
  adding: z
    .object({
      /** The dialog's title, and its button's text. */
      title: z.string().min(1),
      /** What such an agent is, at the top of the dialog. */
      intro: z.string(),
      /** The page's main way to add an agent. */
      primary: z.boolean(),
      /**
       * Programs the kind knows, offered as buttons above the form: each fills in the fields it
       * names (an ACP agent's command and arguments) and a name for the agent; the user can change any.
       */
      presets: z.array(
        z.object({
          label: z.string().min(1),
          values: z.partialRecord(AgentFieldNameSchema, z.union([z.string(), z.array(z.string())])),
        }),
      ),
    })
    .nullable(),
  /** The settings of its agents, in the forms' order. */
  fields: z.array(AgentFieldSchema),
  /** Its agents' models are an Ollama server's, listed by `GET /api/ollama/models?agent=<name>`. */
  ollamaModels: z.boolean(),
});
export type AgentKindDescriptor = z.infer<typeof AgentKindDescriptorSchema>;

export const AgentKindListSchema = z.object({ kinds: z.array(AgentKindDescriptorSchema) });
export type AgentKindList = z.infer<typeof AgentKindListSchema>;
