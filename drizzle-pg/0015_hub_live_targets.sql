ALTER TABLE "hub_agents" ADD COLUMN "target_url" text;--> statement-breakpoint
ALTER TABLE "hub_agents" ADD COLUMN "target_session" text;--> statement-breakpoint
ALTER TABLE "hub_agents" ADD COLUMN "target_password" text;