CREATE TABLE `job_attempts` (
	`job_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`exit_code` integer,
	`error` text,
	`started_at` integer NOT NULL,
	`ended_at` integer,
	`output_start` integer NOT NULL,
	`output_end` integer,
	PRIMARY KEY(`job_id`, `attempt`),
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `agents` ADD `retry` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `attempt` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `retry` text;