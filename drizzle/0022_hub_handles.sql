ALTER TABLE `hub_agents` ADD `handle_hash` text;--> statement-breakpoint
ALTER TABLE `hub_agents` ADD `lease_until` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `hub_agents_handle_idx` ON `hub_agents` (`handle_hash`);--> statement-breakpoint
CREATE INDEX `hub_agents_live_idx` ON `hub_agents` (`lease_until`) WHERE ended_at is null;