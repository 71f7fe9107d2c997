CREATE TABLE `mcp_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`session_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`ttl_ms` integer NOT NULL,
	`cancelled_at` integer,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mcp_tasks_session_idx` ON `mcp_tasks` (`session_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `mcp_tasks_job_idx` ON `mcp_tasks` (`job_id`);