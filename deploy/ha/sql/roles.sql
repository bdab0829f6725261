-- The database and roles for gpufed on the Patroni-managed pair. Run once, as postgres on
-- the primary (Patroni's leader: `patronictl -c /etc/patroni/15-main.yml list` names it):
--   sudo -u postgres psql -v ON_ERROR_STOP=1 -f roles.sql
-- then set the two passwords interactively (psql's \password sends a SCRAM verifier, so
-- the password never appears in a command line, the server log or this file):
--   sudo -u postgres psql -c '\password gpufed_owner'
--   sudo -u postgres psql -c '\password gpufed'
-- and put each in the passfile of whoever uses it (gpufed's: /etc/gpufed/pgpass, owner
-- gpufed, mode 0600). Both roles replicate to the standby with everything else.
--
-- Two roles, so that the controller cannot rewrite what it has journalled:
--   gpufed_owner  owns the database and the schema, creates and alters the tables
--                 (migrations, once per release); gpufed never runs as it day to day.
--   gpufed        the controller's role (the URI's user): reads and writes the store and
--                 the lease, and may only INSERT and SELECT the audit journal.
--
-- Status, at the time of writing (issue 38, being built): `gpufed run --store` migrates
-- the lease table itself when it starts (controller/runtime/replica.cc) and the store's
-- tables through the same migration runner, which needs CREATE on the schema; the journal
-- on PostgreSQL (controller/pgjournal) expects its owner to migrate it and the controller
-- to hold INSERT and SELECT only. Until a separate migration command exists, the
-- controller role is granted CREATE on the schema below (marked TEMPORARY): remove that
-- grant once the owner migrates every component, and check the release notes.

CREATE ROLE gpufed_owner LOGIN;
CREATE ROLE gpufed LOGIN;
CREATE DATABASE gpufed OWNER gpufed_owner ENCODING 'UTF8' TEMPLATE template0;

\connect gpufed

-- Nobody but the two roles connects; nobody else creates anything.
REVOKE ALL ON DATABASE gpufed FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE gpufed TO gpufed;
ALTER SCHEMA public OWNER TO gpufed_owner;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO gpufed;

-- TEMPORARY (see above): lets `gpufed run --store` create the lease and store tables, and
-- the fence's PL/pgSQL function `gpufed_check_fence` (the `ha` component's migration 3;
-- plpgsql is a trusted language, and a function's EXECUTE is PUBLIC's by default: an owner
-- that migrates it later must leave the controller role EXECUTE on it).
GRANT CREATE ON SCHEMA public TO gpufed;

-- Tables the owner creates from now on: the controller reads and writes them...
ALTER DEFAULT PRIVILEGES FOR ROLE gpufed_owner IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO gpufed;
ALTER DEFAULT PRIVILEGES FOR ROLE gpufed_owner IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO gpufed;

-- ...except the audit journal and the pass snapshots its decisions name, append (write
-- once) and read only. Run this part after the owner's migration has created
-- gpufed_journal and gpufed_snapshots (their triggers refuse UPDATE, DELETE and TRUNCATE
-- to every role anyway; the privileges make the refusal the engine's first word):
--   REVOKE UPDATE, DELETE, TRUNCATE ON gpufed_journal, gpufed_snapshots FROM gpufed;
--   GRANT INSERT, SELECT ON gpufed_journal, gpufed_snapshots TO gpufed;
-- and, once the owner migrates every component (no TEMPORARY grant left), the migration
-- ledger is the owner's too:
--   REVOKE INSERT, UPDATE, DELETE ON gpufed_schema FROM gpufed;
--   GRANT SELECT ON gpufed_schema TO gpufed;
-- Checked 2026-11-29 on PostgreSQL 15 (controller/pg/testing/pg-ha-pair.sh): with these
-- grants the controller role inserts into and updates a table the owner created, inserts
-- into and reads gpufed_journal, and is refused UPDATE and DELETE on it (42501).
