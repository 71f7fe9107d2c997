CREATE TABLE `job_files` (
	`job_id` text NOT NULL,
	`path` text NOT NULL,
	`change` text NOT NULL,
	`size` integer,
	`at` integer NOT NULL,
	PRIMARY KEY(`job_id`, `path`),
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
