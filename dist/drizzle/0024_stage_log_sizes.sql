CREATE TABLE "stage_log_sizes" (
	"run_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"stage" text NOT NULL,
	"bytes" bigint NOT NULL,
	CONSTRAINT "stage_log_sizes_pkey" PRIMARY KEY("run_id","attempt","stage")
);
--> statement-breakpoint
ALTER TABLE "stage_log_sizes" ADD CONSTRAINT "stage_log_sizes_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;