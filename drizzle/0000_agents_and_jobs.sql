CREATE TABLE `agents` (
	`name` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`provider` text NOT NULL,
	`model` text,
	`workdir` text NOT NULL,
	`timeout_s` integer NOT NULL,
	`max_concurrent` integer NOT NULL,
	`env` text NOT NULL,
	`enabled` integer NOT NULL,
	`command` text,
	`args` text,
	`base_url` text,
	`description` text DEFAULT '' NOT NULL,
	`builtin` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`agent` text NOT NULL,
	`status` text NOT NULL,
	`prompt` text NOT NULL,
	`workdir` text NOT NULL,
	`model` text,
	`timeout_s` integer NOT NULL,
	`origin` text NOT NULL,
	`invocation` text,
	`pid` integer,
	`pid_start` integer,
	`exit_code` integer,
	`error` text,
	`final_text` text,
	`output_bytes` integer DEFAULT 0 NOT NULL,
	`usage_model` text,
	`input_tokens` integer,
	`output_tokens` integer,
	`cached_input_tokens` integer,
	`cost_usd` real,
	`cost_source` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	FOREIGN KEY (`agent`) REFERENCES `agents`(`name`) ON UPDATE cascade ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `jobs_created_idx` ON `jobs` (`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_agent_created_idx` ON `jobs` (`agent`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_status_idx` ON `jobs` (`status`);