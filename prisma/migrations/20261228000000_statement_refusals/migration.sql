-- Not from schema.prisma: a statement's own refusal. A statement sent with
-- its COMMIT in one message (@sms/db's queryAndCommit) must stop that COMMIT
-- when it refuses, and only an error does: `CASE WHEN <refused> THEN
-- sms_refuse(<detail>) END` raises SQLSTATE SR001 (a class PostgreSQL does not
-- use) with the detail the caller reads to tell which rule refused. The
-- transaction is then aborted and rolled back. The live send's reservation
-- (packages/domain/src/store/ledger.ts) is the one user.
CREATE FUNCTION "sms_refuse"(detail text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  RAISE EXCEPTION 'refused by the statement' USING ERRCODE = 'SR001', DETAIL = detail;
END
$fn$;
