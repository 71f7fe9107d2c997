ALTER TABLE `hub_agents` ADD `target_url` text;--> statement-breakpoint
ALTER TABLE `hub_agents` ADD `target_session` text;--> statement-breakpoint
ALTER TABLE `hub_agents` ADD `target_password` text;