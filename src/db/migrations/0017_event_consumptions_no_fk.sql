-- event_consumptions.event_id loses its foreign key (src/db/schema/events.ts): its check locked
-- each event row once per consumer, doubling the cost of recording a feed chunk's consumptions.
ALTER TABLE "event_consumptions" DROP CONSTRAINT "event_consumptions_event_id_events_id_fk";
