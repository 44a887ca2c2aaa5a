-- Messages partitioned by time (issue 26, docs/scaling.md#partitioned-by-month):
-- `messages`, `message_events` and `request_log` become range-partitioned by
-- month on their creation time, with a DEFAULT partition as a safety net. The
-- rows already stored move into the new tables; every column, default, index
-- and foreign key of the old tables is carried over as it is (read from the
-- catalog, not restated here), so what schema.prisma describes still holds.
--
-- What PostgreSQL requires, and what follows from it:
-- - A partitioned table's primary key must include the partition key: the
--   keys become (id, created_at) for messages and request_log, and
--   (message_id, status, message_created_at) for message_events. An id is
--   still unique (ids are random and time-ordered; created_at is a function
--   of the row), and request_log's `ON CONFLICT` now names (id, created_at).
-- - Nothing can reference messages(id) alone any more, and a foreign key
--   that references a partitioned table makes every DETACH scan the partition
--   for referencing rows under an exclusive lock (measured: 1.2 s per million
--   rows). So message_events loses its foreign key and instead carries its
--   message's created_at, is partitioned on it with the same months, and goes
--   with its message: a partition of messages is dropped together with the
--   same month of message_events, and a deleted message row takes its events
--   along through the trigger below (what ON DELETE CASCADE did).
-- - Nothing else references messages: verifications, idempotency records, the
--   credit ledger and the request log hold a message id without a foreign key.
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- The timeline rows learn their message's creation time (the partition key).
ALTER TABLE "message_events" DROP CONSTRAINT "message_events_message_id_fkey";
ALTER TABLE "message_events" ADD COLUMN "message_created_at" TIMESTAMPTZ(3);
UPDATE "message_events" e SET "message_created_at" = m."created_at" FROM "messages" m WHERE m."id" = e."message_id";
ALTER TABLE "message_events" ALTER COLUMN "message_created_at" SET NOT NULL;

-- Used by this migration only (dropped below): replaces `tbl` by a table
-- partitioned by month on `key_column`, with one partition per month that holds
-- rows, this month and the next `ahead` ones, and a DEFAULT partition; copies
-- the rows; recreates the indexes and foreign keys under their own names; the
-- primary key gains `key_column`.
CREATE FUNCTION "migration_partition_by_month"(tbl text, key_column text, ahead integer) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  old text := tbl || '_unpartitioned';
  index_defs text[];
  foreign_keys text[][];
  pk_columns text[];
  item text;
  fk text[];
  first_month timestamptz;
  last_month timestamptz;
  month timestamptz;
BEGIN
  EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, old);

  SELECT array_agg(pg_get_indexdef(ix.indexrelid) ORDER BY ix.indexrelid) INTO index_defs
  FROM pg_index ix WHERE ix.indrelid = old::regclass AND NOT ix.indisprimary;
  SELECT array_agg(ARRAY[con.conname::text, pg_get_constraintdef(con.oid)] ORDER BY con.conname) INTO foreign_keys
  FROM pg_constraint con WHERE con.conrelid = old::regclass AND con.contype = 'f';
  SELECT array_agg(a.attname::text ORDER BY k.ord) INTO pk_columns
  FROM pg_index ix, unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord), pg_attribute a
  WHERE ix.indrelid = old::regclass AND ix.indisprimary AND a.attrelid = ix.indrelid AND a.attnum = k.attnum;
  IF NOT key_column = ANY(pk_columns) THEN pk_columns := pk_columns || key_column; END IF;

  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY RANGE (%I)',
                 tbl, old, key_column);

  -- Months in UTC: [first day 00:00 UTC, first day of the next month).
  EXECUTE format('SELECT date_trunc(''month'', min(%1$I) AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC'',
                         date_trunc(''month'', max(%1$I) AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC'' FROM %2$I', key_column, old)
    INTO first_month, last_month;
  month := date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  first_month := least(coalesce(first_month, month), month);
  last_month := greatest(coalesce(last_month, month), month + make_interval(months => ahead));
  WHILE first_month <= last_month LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                   tbl || '_p' || to_char(first_month AT TIME ZONE 'UTC', 'YYYY_MM'), tbl,
                   first_month, first_month + interval '1 month');
    first_month := first_month + interval '1 month';
  END LOOP;
  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', tbl || '_default', tbl);

  EXECUTE format('INSERT INTO %I SELECT * FROM %I', tbl, old);
  EXECUTE format('DROP TABLE %I', old);

  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (%s)', tbl, tbl || '_pkey',
                 (SELECT string_agg(format('%I', c), ', ') FROM unnest(pk_columns) AS c));
  FOREACH item IN ARRAY coalesce(index_defs, ARRAY[]::text[]) LOOP
    EXECUTE regexp_replace(item, ' ON (ONLY )?\S+ USING ', format(' ON %I USING ', tbl));
  END LOOP;
  IF foreign_keys IS NOT NULL THEN
    FOREACH fk SLICE 1 IN ARRAY foreign_keys LOOP
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl, fk[1], fk[2]);
    END LOOP;
  END IF;
END
$fn$;

SELECT "migration_partition_by_month"('messages', 'created_at', 2);
SELECT "migration_partition_by_month"('message_events', 'message_created_at', 2);
SELECT "migration_partition_by_month"('request_log', 'created_at', 2);
DROP FUNCTION "migration_partition_by_month"(text, text, integer);

-- Not from schema.prisma: what the foreign key's ON DELETE CASCADE did. A
-- message row deleted one by one (the unclaimed-messages purge, a send undone,
-- a project deleted) takes its timeline with it: one DELETE per statement over
-- the deleted rows (a transition table), not one per row. A dropped partition
-- of messages is dropped with the same month of message_events instead.
CREATE FUNCTION "messages_delete_events"() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM message_events e USING gone
  WHERE e.message_id = gone.id AND e.message_created_at = gone.created_at;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER "messages_delete_events" AFTER DELETE ON "messages"
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION "messages_delete_events"();
