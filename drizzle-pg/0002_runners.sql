CREATE TABLE "runners" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"labels" jsonb NOT NULL,
	"hostname" text NOT NULL,
	"version" text NOT NULL,
	"started_at" bigint NOT NULL,
	"heartbeat_at" bigint NOT NULL,
	"stopped_at" bigint
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "runner_label" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "runner" text;