CREATE TABLE "blob_store_binding" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"store_id" text NOT NULL,
	"location" text NOT NULL,
	"bound_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "blob_store_binding_one" CHECK ("blob_store_binding"."one")
);
