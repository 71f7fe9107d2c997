ALTER TABLE `jobs` ADD `relaunch_of` text;--> statement-breakpoint
CREATE INDEX `jobs_relaunch_idx` ON `jobs` (`relaunch_of`,`seq`);