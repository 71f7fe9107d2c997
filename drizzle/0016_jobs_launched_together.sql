ALTER TABLE `jobs` ADD `group_id` text;--> statement-breakpoint
CREATE INDEX `jobs_group_idx` ON `jobs` (`group_id`,`seq`);