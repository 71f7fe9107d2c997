import { z } from "zod";
import { AgentNameSchema } from "./agents.js";

const ProviderSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase letters, digits, . _ -");
const ModelSchema = z.string().min(1).max(200);
const PerMillion = z.number().min(0).max(10_000);

/** USD per million tokens for one provider and model; `cachedInputPerM` null: cached tokens cost the input price. */
export const PriceSchema = z.object({
  provider: z.string(),
  model: z.string(),
  inputPerM: z.number(),
  outputPerM: z.number(),
  cachedInputPerM: z.number().nullable(),
  /** `table`: shipped with Corral; `override`: set by a user. */
  origin: z.enum(["table", "override"]),
  note: z.string().nullable(),
});
export type Price = z.infer<typeof PriceSchema>;

export const PriceListSchema = z.object({
  /** The day the shipped table was taken from the providers' price pages. */
  tableDate: z.string(),
  sources: z.array(z.string()),
  prices: z.array(PriceSchema),
});
export type PriceList = z.infer<typeof PriceListSchema>;

export const SetPriceBodySchema = z
  .object({
    provider: ProviderSchema,
    model: ModelSchema,
    inputPerM: PerMillion.describe("USD per million input tokens"),
    outputPerM: PerMillion.describe("USD per million output tokens"),
    cachedInputPerM: PerMillion.optional().describe("USD per million cached input tokens (default: the input price)"),
  })
  .strict();
export type SetPriceBody = z.infer<typeof SetPriceBodySchema>;

export const PriceKeySchema = z.object({ provider: ProviderSchema, model: ModelSchema }).strict();
export type PriceKey = z.infer<typeof PriceKeySchema>;

export const BudgetPeriodSchema = z.enum(["day", "month"]);
export type BudgetPeriod = z.infer<typeof BudgetPeriodSchema>;

const BudgetLimits = {
  maxCostUsd: z.number().positive().max(1_000_000).optional().describe("Most USD the provider may cost in the period"),
  maxTokens: z.number().int().positive().optional().describe("Most tokens (input + output) in the period"),
};

const needsALimit = (b: { maxCostUsd?: number | null; maxTokens?: number | null }) => b.maxCostUsd != null || b.maxTokens != null;

export const CreateBudgetBodySchema = z
  .object({ provider: ProviderSchema, period: BudgetPeriodSchema, ...BudgetLimits })
  .strict()
  .refine(needsALimit, { message: "give maxCostUsd, maxTokens or both", path: ["maxCostUsd"] });
export type CreateBudgetBody = z.infer<typeof CreateBudgetBodySchema>;

export const UpdateBudgetBodySchema = z
  .object({
    maxCostUsd: BudgetLimits.maxCostUsd.unwrap().nullable().optional(),
    maxTokens: BudgetLimits.maxTokens.unwrap().nullable().optional(),
  })
  .strict();
export type UpdateBudgetBody = z.infer<typeof UpdateBudgetBodySchema>;

export const BudgetSchema = z.object({
  id: z.number().int(),
  provider: z.string(),
  period: BudgetPeriodSchema,
  maxCostUsd: z.number().nullable(),
  maxTokens: z.number().int().nullable(),
  /** What the provider used in the current period. */
  usedCostUsd: z.number(),
  usedTokens: z.number().int(),
  /** Jobs in the period whose cost is unknown (their tokens still count). */
  unpricedJobs: z.number().int(),
  periodStart: z.number(),
  periodEnd: z.number(),
  exceeded: z.boolean(),
  /** `file`: the config file declares it (and sets it again when the file changes); `registry`: added here. */
  source: z.enum(["file", "registry"]),
});
export type Budget = z.infer<typeof BudgetSchema>;

export const BudgetListSchema = z.object({
  budgets: z.array(BudgetSchema),
  /** The providers a budget may name: Corral's agent kinds', the registered agents', the price table's and overrides', and those of jobs already run. */
  providers: z.array(z.string()),
});
export type BudgetList = z.infer<typeof BudgetListSchema>;

export const CostGroupKeySchema = z.enum(["provider", "model", "agent", "day"]);
export type CostGroupKey = z.infer<typeof CostGroupKeySchema>;

/** A day (`2026-11-29`, the server's local day) or a time in ms since the epoch. */
const TimeParam = z.union([z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date like 2026-11-29 or ms since the epoch"), z.coerce.number().int().min(0)]);

export const CostQuerySchema = z
  .object({
    from: TimeParam.optional().describe("Start of the range (default: 30 days ago)"),
    to: TimeParam.optional().describe("End of the range, exclusive; a date includes that whole day (default: now)"),
    groupBy: z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .pipe(z.array(CostGroupKeySchema).max(4))
      .optional()
      .describe("Comma list of provider, model, agent, day (default provider)"),
    provider: z.string().min(1).max(100).optional(),
    agent: AgentNameSchema.optional(),
  })
  .strict();
export type CostQuery = z.infer<typeof CostQuerySchema>;

export const CostTotalsSchema = z.object({
  jobs: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  cachedInputTokens: z.number().int(),
  /** Sum over the jobs with a known cost; null when none has one. */
  costUsd: z.number().nullable(),
  reportedUsd: z.number(),
  estimatedUsd: z.number(),
  pricedJobs: z.number().int(),
  /** Jobs that used tokens but have no price: their cost is unknown, never $0. */
  unpricedJobs: z.number().int(),
  unpricedInputTokens: z.number().int(),
  unpricedOutputTokens: z.number().int(),
  /** Jobs that reported no usage at all (plain-text CLIs, early failures). */
  noUsageJobs: z.number().int(),
});
export type CostTotals = z.infer<typeof CostTotalsSchema>;

export const CostGroupSchema = CostTotalsSchema.extend({
  provider: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  agent: z.string().nullable().optional(),
  day: z.string().nullable().optional(),
});
export type CostGroup = z.infer<typeof CostGroupSchema>;

export const CostReportSchema = z.object({
  from: z.number(),
  to: z.number(),
  groupBy: z.array(CostGroupKeySchema),
  groups: z.array(CostGroupSchema),
  totals: CostTotalsSchema,
});
export type CostReport = z.infer<typeof CostReportSchema>;
