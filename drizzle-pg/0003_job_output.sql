CREATE TABLE "job_output" (
	"job_id" text NOT NULL,
	"seq" integer NOT NULL,
	"stream" text NOT NULL,
	"data" text NOT NULL,
	"at" bigint NOT NULL,
	CONSTRAINT "job_output_job_id_seq_pk" PRIMARY KEY("job_id","seq")
);
--> statement-breakpoint
ALTER TABLE "job_output" ADD CONSTRAINT "job_output_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;