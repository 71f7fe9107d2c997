CREATE TABLE `runners` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`labels` text NOT NULL,
	`hostname` text NOT NULL,
	`version` text NOT NULL,
	`started_at` integer NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`stopped_at` integer
);
--> statement-breakpoint
ALTER TABLE `agents` ADD `runner_label` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `runner` text;