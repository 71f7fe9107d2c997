CREATE TABLE "runner_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"runner" text NOT NULL,
	"kind" text NOT NULL,
	"path" text NOT NULL,
	"read_offset" bigint NOT NULL,
	"read_limit" integer NOT NULL,
	"range" text,
	"asked_at" bigint NOT NULL,
	"answered_at" bigint,
	"answer" text,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "runner_requests" ADD CONSTRAINT "runner_requests_runner_runners_id_fk" FOREIGN KEY ("runner") REFERENCES "public"."runners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "runner_requests_runner_idx" ON "runner_requests" USING btree ("runner","answered_at");