// accounts and account_identities: a human who signed in with an external
// identity provider. One account per (provider, subject).
import type { Sql } from "@sms/db";

const FIND_BY_IDENTITY_SQL = `SELECT account_id FROM account_identities WHERE provider = $1 AND subject = $2`;
const CREATE_SQL = `INSERT INTO accounts (id, email, name, created_at) VALUES ($1, $2, $3, CAST($4 AS timestamptz))`;
const ADD_IDENTITY_SQL = `
  INSERT INTO account_identities (id, account_id, provider, subject, email, created_at)
  VALUES ($1, $2, $3, $4, $5, CAST($6 AS timestamptz))
  ON CONFLICT (provider, subject) DO NOTHING
  RETURNING id`;
const DELETE_SQL = `DELETE FROM accounts WHERE id = $1`;

export function accountStore(sql: Sql) {
  return {
    async findByIdentity(provider: string, subject: string): Promise<string | null> {
      const [row] = await sql.query<{ account_id: string }>(FIND_BY_IDENTITY_SQL, [provider, subject]);
      return row?.account_id ?? null;
    },

    async create(account: {
      id: string;
      email: string | null;
      name: string | null;
      now: Date;
    }): Promise<void> {
      await sql.query(CREATE_SQL, [account.id, account.email, account.name, account.now]);
    },

    /** Links an identity to an account; false when that identity already belongs to one. */
    async addIdentity(identity: {
      id: string;
      accountId: string;
      provider: string;
      subject: string;
      email: string | null;
      now: Date;
    }): Promise<boolean> {
      const rows = await sql.query(ADD_IDENTITY_SQL, [
        identity.id,
        identity.accountId,
        identity.provider,
        identity.subject,
        identity.email,
        identity.now,
      ]);
      return rows.length === 1;
    },

    async delete(accountId: string): Promise<void> {
      await sql.query(DELETE_SQL, [accountId]);
    },
  };
}

export type AccountStore = ReturnType<typeof accountStore>;
