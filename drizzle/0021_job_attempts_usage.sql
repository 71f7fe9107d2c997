ALTER TABLE `job_attempts` ADD `usage_model` text;--> statement-breakpoint
ALTER TABLE `job_attempts` ADD `input_tokens` integer;--> statement-breakpoint
ALTER TABLE `job_attempts` ADD `output_tokens` integer;--> statement-breakpoint
ALTER TABLE `job_attempts` ADD `cached_input_tokens` integer;--> statement-breakpoint
ALTER TABLE `job_attempts` ADD `cost_usd` real;--> statement-breakpoint
ALTER TABLE `job_attempts` ADD `cost_source` text;