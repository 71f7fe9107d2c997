CREATE TABLE `job_output` (
	`job_id` text NOT NULL,
	`seq` integer NOT NULL,
	`stream` text NOT NULL,
	`data` text NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`job_id`, `seq`),
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
