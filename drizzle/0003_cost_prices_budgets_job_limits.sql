CREATE TABLE `budgets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`provider` text NOT NULL,
	`period` text NOT NULL,
	`max_cost_usd` real,
	`max_tokens` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `budgets_provider_period_idx` ON `budgets` (`provider`,`period`);--> statement-breakpoint
CREATE TABLE `price_overrides` (
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`input_per_m` real NOT NULL,
	`output_per_m` real NOT NULL,
	`cached_input_per_m` real,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `model`)
);
--> statement-breakpoint
ALTER TABLE `jobs` ADD `provider` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `max_cost_usd` real;--> statement-breakpoint
ALTER TABLE `jobs` ADD `max_tokens` integer;--> statement-breakpoint
CREATE INDEX `jobs_provider_created_idx` ON `jobs` (`provider`,`created_at`);--> statement-breakpoint
UPDATE `jobs` SET `provider` = (SELECT `provider` FROM `agents` WHERE `agents`.`name` = `jobs`.`agent`) WHERE `provider` IS NULL;
