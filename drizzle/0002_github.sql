CREATE TABLE "deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"event" text NOT NULL,
	"action" text,
	"installation_id" bigint,
	"payload" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"failed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "github_checks" (
	"run_id" text PRIMARY KEY NOT NULL,
	"installation_id" bigint NOT NULL,
	"repository" text NOT NULL,
	"head_sha" text NOT NULL,
	"name" text NOT NULL,
	"check_run_id" bigint,
	"render_version" integer DEFAULT 1 NOT NULL,
	"sent_version" integer DEFAULT 0 NOT NULL,
	"annotations_sent" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "github_notices" (
	"id" text PRIMARY KEY NOT NULL,
	"installation_id" bigint NOT NULL,
	"repository" text NOT NULL,
	"head_sha" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"body" jsonb NOT NULL,
	"check_run_id" bigint,
	"render_version" integer DEFAULT 1 NOT NULL,
	"sent_version" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "group_comments" (
	"group_id" text PRIMARY KEY NOT NULL,
	"installation_id" bigint NOT NULL,
	"repository" text NOT NULL,
	"pr_number" integer NOT NULL,
	"comment_id" bigint,
	"render_version" integer DEFAULT 1 NOT NULL,
	"sent_version" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "installations" (
	"id" bigint PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"suspended" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "installation_id" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "pr_number" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "trigger" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "automatic" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "metric_goals" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "check_name" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "base_ref" text;--> statement-breakpoint
ALTER TABLE "github_checks" ADD CONSTRAINT "github_checks_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "deliveries_unprocessed_idx" ON "deliveries" USING btree ("received_at") WHERE processed_at is null and failed_at is null;--> statement-breakpoint
CREATE INDEX "github_checks_repository_head_sha_idx" ON "github_checks" USING btree ("repository","head_sha");--> statement-breakpoint
CREATE INDEX "runs_repository_pr_number_idx" ON "runs" USING btree ("repository","pr_number");