CREATE TABLE `runner_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`runner` text NOT NULL,
	`kind` text NOT NULL,
	`path` text NOT NULL,
	`read_offset` integer NOT NULL,
	`read_limit` integer NOT NULL,
	`range` text,
	`asked_at` integer NOT NULL,
	`answered_at` integer,
	`answer` text,
	`error` text,
	FOREIGN KEY (`runner`) REFERENCES `runners`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runner_requests_runner_idx` ON `runner_requests` (`runner`,`answered_at`);