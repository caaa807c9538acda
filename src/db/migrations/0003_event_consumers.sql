CREATE TABLE "event_consumptions" (
	"consumer" varchar(100) NOT NULL,
	"event_id" uuid NOT NULL,
	"consumed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_consumptions_consumer_event_id_pk" PRIMARY KEY("consumer","event_id")
);
--> statement-breakpoint
DROP INDEX "events_created_idx";--> statement-breakpoint
ALTER TABLE "event_consumptions" ADD CONSTRAINT "event_consumptions_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;