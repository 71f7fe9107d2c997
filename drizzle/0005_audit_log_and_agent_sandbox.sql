CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`action` text NOT NULL,
	`job_id` text NOT NULL,
	`agent` text NOT NULL,
	`door` text NOT NULL,
	`client` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
CREATE INDEX `audit_log_job_idx` ON `audit_log` (`job_id`);--> statement-breakpoint
ALTER TABLE `agents` ADD `sandbox` text DEFAULT 'none' NOT NULL;