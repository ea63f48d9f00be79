CREATE TABLE "annotations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "annotations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"stage" text NOT NULL,
	"path" text,
	"line" integer,
	"level" text NOT NULL,
	"message" text NOT NULL,
	"title" text
);
--> statement-breakpoint
CREATE TABLE "cache_entries" (
	"repository" text NOT NULL,
	"trust_domain" text NOT NULL,
	"key" text NOT NULL,
	"stage" text NOT NULL,
	"run_id" text NOT NULL,
	"outs" jsonb NOT NULL,
	"metrics" jsonb NOT NULL,
	"key_inputs" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cache_entries_pkey" PRIMARY KEY("repository","trust_domain","key")
);
--> statement-breakpoint
CREATE TABLE "metric_points" (
	"run_id" text NOT NULL,
	"stage" text NOT NULL,
	"name" text NOT NULL,
	"step" integer NOT NULL,
	"value" double precision NOT NULL,
	CONSTRAINT "metric_points_pkey" PRIMARY KEY("run_id","stage","name","step")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"repository" text NOT NULL,
	"pipeline_path" text NOT NULL,
	"trust_domain" text DEFAULT 'trusted' NOT NULL,
	"group_id" text,
	"group_index" integer,
	"commit" text,
	"dirty" boolean DEFAULT false NOT NULL,
	"code_digest" text,
	"params" jsonb NOT NULL,
	"params_digest" text NOT NULL,
	"env_digest" text,
	"no_cache" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"status_reason" text,
	"labels" text[] DEFAULT '{}'::text[] NOT NULL,
	"trigger_key" text,
	"attempt" integer DEFAULT 1 NOT NULL,
	"metrics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"duration_ms" double precision,
	CONSTRAINT "runs_trigger_key_unique" UNIQUE("trigger_key")
);
--> statement-breakpoint
CREATE TABLE "stages" (
	"run_id" text NOT NULL,
	"name" text NOT NULL,
	"position" integer NOT NULL,
	"status" text NOT NULL,
	"cache_key" text,
	"key_inputs" jsonb,
	"cached_from" text,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"duration_ms" double precision DEFAULT 0 NOT NULL,
	"exit_code" integer,
	"outs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"metrics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"log_tail" text DEFAULT '' NOT NULL,
	"log_digest" text,
	"error" text,
	CONSTRAINT "stages_pkey" PRIMARY KEY("run_id","name")
);
--> statement-breakpoint
ALTER TABLE "annotations" ADD CONSTRAINT "annotations_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "metric_points" ADD CONSTRAINT "metric_points_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stages" ADD CONSTRAINT "stages_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "annotations_run_id_idx" ON "annotations" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "cache_entries_latest_idx" ON "cache_entries" USING btree ("repository","trust_domain","stage","created_at");--> statement-breakpoint
CREATE INDEX "runs_repository_pipeline_path_commit_idx" ON "runs" USING btree ("repository","pipeline_path","commit");--> statement-breakpoint
CREATE INDEX "runs_status_idx" ON "runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "runs_group_id_idx" ON "runs" USING btree ("group_id");