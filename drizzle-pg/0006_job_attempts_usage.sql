ALTER TABLE "job_attempts" ADD COLUMN "usage_model" text;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD COLUMN "input_tokens" bigint;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD COLUMN "output_tokens" bigint;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD COLUMN "cached_input_tokens" bigint;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD COLUMN "cost_usd" double precision;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD COLUMN "cost_source" text;