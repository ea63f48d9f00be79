CREATE TABLE "control_plane_availability" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"available_since" timestamp with time zone DEFAULT now() NOT NULL,
	"last_beat_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "control_plane_availability_one" CHECK ("control_plane_availability"."one")
);
