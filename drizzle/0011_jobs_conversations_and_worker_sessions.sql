ALTER TABLE `jobs` ADD `conversation_id` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `follow_up_of` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `worker_session` text;--> statement-breakpoint
CREATE INDEX `jobs_conversation_idx` ON `jobs` (`conversation_id`,`seq`);