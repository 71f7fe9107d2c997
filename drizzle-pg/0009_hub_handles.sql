ALTER TABLE "hub_agents" ADD COLUMN "handle_hash" text;--> statement-breakpoint
ALTER TABLE "hub_agents" ADD COLUMN "lease_until" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "hub_agents_handle_idx" ON "hub_agents" USING btree ("handle_hash");--> statement-breakpoint
CREATE INDEX "hub_agents_live_idx" ON "hub_agents" USING btree ("lease_until") WHERE ended_at is null;