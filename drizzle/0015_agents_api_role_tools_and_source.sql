ALTER TABLE `agents` ADD `api` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `api_key_env` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `role` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `tools` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `allowed_hosts` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `max_steps` integer;--> statement-breakpoint
ALTER TABLE `agents` ADD `source` text DEFAULT 'registry' NOT NULL;