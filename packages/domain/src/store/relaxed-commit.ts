// The one switch for the transactions that commit without waiting for the
// disk (a test send's claim, a live send's write-ahead and record, a released
// claim, the request log). Each statement selects RELAXED_COMMIT, which sets
// synchronous_commit for its own transaction only.
//
// By default that is `off`: the row locks are free one disk flush sooner, and
// a later durable commit on the same server makes the relaxed ones durable
// (PostgreSQL writes the log in order). Behind a failover endpoint (HAProxy in
// front of Patroni) "the same server" no longer holds: a relaxed commit on the
// old primary that the synchronous standby never received is lost at
// promotion, while the durable commit meant to cover it succeeds on the new
// primary. A database with a synchronous standby therefore sets the
// placeholder `sms.synchronous_commit` to `on` for the service's role or
// database (docs/deploy.md, "The database: high availability"):
//
//   ALTER DATABASE sms SET sms.synchronous_commit = 'on';
//
// and every one of these transactions then commits as any other does: an
// acknowledged send is on the standby before it is answered.

/** A select-list item: this transaction's synchronous_commit, `off` unless the database says otherwise. */
export const RELAXED_COMMIT = `set_config('synchronous_commit',
    coalesce(nullif(current_setting('sms.synchronous_commit', true), ''), 'off'), true) AS relaxed`;
