import type { FastifyInstance } from "fastify";
import { CostQuerySchema, CreateBudgetBodySchema, PriceKeySchema, SetPriceBodySchema, UpdateBudgetBodySchema } from "@corral/shared";
import { z } from "zod";
import type { Services } from "../../services.js";
import { parseInput } from "../../lib/errors.js";

const BudgetParamsSchema = z.object({ id: z.coerce.number().int().min(1) });

export function costRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const { costs } = services;

    app.get("/api/costs", async (request) => costs.report(parseInput(CostQuerySchema, request.query)));

    app.get("/api/costs/prices", async () => costs.prices());

    app.put("/api/costs/prices", async (request) => costs.setPrice(parseInput(SetPriceBodySchema, request.body)));

    app.delete("/api/costs/prices", async (request, reply) => {
      const { provider, model } = parseInput(PriceKeySchema, request.query);
      costs.deletePrice(provider, model);
      reply.code(204);
    });

    app.get("/api/costs/budgets", async () => ({ budgets: costs.budgets() }));

    app.post("/api/costs/budgets", async (request, reply) => {
      const budget = costs.createBudget(parseInput(CreateBudgetBodySchema, request.body));
      reply.code(201);
      return budget;
    });

    app.get("/api/costs/budgets/:id", async (request) => costs.budget(parseInput(BudgetParamsSchema, request.params).id));

    app.patch("/api/costs/budgets/:id", async (request) => {
      const { id } = parseInput(BudgetParamsSchema, request.params);
      return costs.updateBudget(id, parseInput(UpdateBudgetBodySchema, request.body));
    });

    app.delete("/api/costs/budgets/:id", async (request, reply) => {
      costs.deleteBudget(parseInput(BudgetParamsSchema, request.params).id);
      reply.code(204);
    });
  };
}
