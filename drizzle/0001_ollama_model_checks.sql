CREATE TABLE `ollama_models` (
	`base_url` text NOT NULL,
	`model` text NOT NULL,
	`facts` text,
	`checked_at` integer,
	`probe_outcome` text,
	`probe_detail` text,
	`probed_at` integer,
	PRIMARY KEY(`base_url`, `model`)
);
