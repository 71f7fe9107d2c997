import type { FastifyInstance } from "fastify";
import {
  BudgetListSchema,
  BudgetSchema,
  CostQuerySchema,
  CostReportSchema,
  CreateBudgetBodySchema,
  PriceKeySchema,
  PriceListSchema,
  PriceSchema,
  SetPriceBodySchema,
  UpdateBudgetBodySchema,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../../services.js";
import { BODY_ERRORS, errors } from "../contracts.js";

const BudgetParamsSchema = z.object({ id: z.coerce.number().int().min(1) });
const tags = ["costs"];

export function costRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const { costs } = services;

    app.get(
      "/api/costs",
      {
        schema: {
          summary: "Tokens and cost of the jobs in a time range, grouped",
          tags,
          querystring: CostQuerySchema,
          response: { 200: CostReportSchema, ...errors() },
        },
      },
      async (request) => costs.report(request.query),
    );

    app.get(
      "/api/costs/prices",
      { schema: { summary: "The price table: shipped prices and overrides", tags, response: { 200: PriceListSchema, ...errors() } } },
      async () => costs.prices(),
    );

    app.put(
      "/api/costs/prices",
      {
        schema: {
          summary: "Set (override) the price of a provider's model",
          tags,
          body: SetPriceBodySchema,
          response: { 200: PriceSchema, ...errors(...BODY_ERRORS) },
        },
      },
      async (request) => costs.setPrice(request.body),
    );

    app.delete(
      "/api/costs/prices",
      {
        schema: {
          summary: "Remove a price override (shipped prices cannot be removed)",
          tags,
          querystring: PriceKeySchema,
          response: { 204: z.undefined().describe("Removed"), ...errors(404) },
        },
      },
      async (request, reply) => {
        await costs.deletePrice(request.query.provider, request.query.model);
        return reply.code(204).send();
      },
    );

    app.get(
      "/api/costs/budgets",
      {
        schema: {
          summary: "Every budget, with what its provider used in the current period, and the providers a budget may name",
          tags,
          response: { 200: BudgetListSchema, ...errors() },
        },
      },
      async () => ({ budgets: await costs.budgets(), providers: await costs.providers() }),
    );

    app.post(
      "/api/costs/budgets",
      {
        schema: {
          summary: "Add a daily or monthly budget for a provider",
          tags,
          body: CreateBudgetBodySchema,
          response: { 201: BudgetSchema, ...errors(409, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const budget = await costs.createBudget(request.body);
        reply.code(201);
        return budget;
      },
    );

    app.get(
      "/api/costs/budgets/:id",
      { schema: { summary: "One budget", tags, params: BudgetParamsSchema, response: { 200: BudgetSchema, ...errors(404) } } },
      async (request) => costs.budget(request.params.id),
    );

    app.patch(
      "/api/costs/budgets/:id",
      {
        schema: {
          summary: "Change a budget's limits",
          tags,
          params: BudgetParamsSchema,
          body: UpdateBudgetBodySchema,
          response: { 200: BudgetSchema, ...errors(404, ...BODY_ERRORS) },
        },
      },
      async (request) => costs.updateBudget(request.params.id, request.body),
    );

    app.delete(
      "/api/costs/budgets/:id",
      {
        schema: {
          summary: "Delete a budget",
          tags,
          params: BudgetParamsSchema,
          response: { 204: z.undefined().describe("Deleted"), ...errors(404) },
        },
      },
      async (request, reply) => {
        await costs.deleteBudget(request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
