ALTER TABLE `jobs` ADD `cancel_requested_at` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `cancelled_by` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `cancel_client` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `killed_at` integer;