CREATE TABLE `hub_agents` (
	`session` text NOT NULL,
	`name` text NOT NULL,
	`label` text,
	`registered_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`ended_at` integer,
	PRIMARY KEY(`session`, `name`)
);
--> statement-breakpoint
CREATE TABLE `hub_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session` text NOT NULL,
	`from_agent` text NOT NULL,
	`to_agent` text NOT NULL,
	`text` text NOT NULL,
	`job_id` text,
	`at` integer NOT NULL,
	`received_at` integer,
	`answer_pending` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX `hub_messages_session_idx` ON `hub_messages` (`session`,`id`);--> statement-breakpoint
CREATE INDEX `hub_messages_from_idx` ON `hub_messages` (`session`,`from_agent`,`id`);--> statement-breakpoint
CREATE INDEX `hub_messages_to_idx` ON `hub_messages` (`session`,`to_agent`,`id`);--> statement-breakpoint
CREATE INDEX `hub_messages_inbox_idx` ON `hub_messages` (`session`,`to_agent`,`id`) WHERE received_at is null;--> statement-breakpoint
CREATE INDEX `hub_messages_pending_idx` ON `hub_messages` (`id`) WHERE answer_pending = 1;