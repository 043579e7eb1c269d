-- auth: accounts for the web console (docs/auth.md, "Accounts and console sessions"): a name, a role
-- and a disabled flag per user, console sessions, invitations, and the login throttle shared by every
-- auth replica. Session and invitation tokens are stored as their SHA-256 only.

ALTER TABLE "auth"."user" ADD COLUMN "name" TEXT NOT NULL DEFAULT '';
ALTER TABLE "auth"."user" ADD COLUMN "role" TEXT NOT NULL DEFAULT 'member';
ALTER TABLE "auth"."user" ADD COLUMN "disabled_at" TIMESTAMPTZ(3);
ALTER TABLE "auth"."user" ADD CONSTRAINT "user_role_check" CHECK ("role" IN ('owner', 'member'));
-- One owner: two concurrent first-run setups cannot both win.
CREATE UNIQUE INDEX "user_single_owner_key" ON "auth"."user"("role") WHERE "role" = 'owner';

CREATE TABLE "auth"."console_session" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "console_session_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "console_session_token_hash_check" CHECK (octet_length("token_hash") = 32)
);
CREATE UNIQUE INDEX "console_session_token_hash_key" ON "auth"."console_session"("token_hash");
CREATE INDEX "console_session_user_id_idx" ON "auth"."console_session"("user_id");
ALTER TABLE "auth"."console_session" ADD CONSTRAINT "console_session_user_id_fkey"
    FOREIGN KEY ("user_id") REFERENCES "auth"."user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "auth"."invite" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "created_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    CONSTRAINT "invite_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invite_email_lower_check" CHECK ("email" = lower("email")),
    CONSTRAINT "invite_token_hash_check" CHECK (octet_length("token_hash") = 32)
);
CREATE UNIQUE INDEX "invite_token_hash_key" ON "auth"."invite"("token_hash");
ALTER TABLE "auth"."invite" ADD CONSTRAINT "invite_created_by_fkey"
    FOREIGN KEY ("created_by") REFERENCES "auth"."user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One row per throttled key (`account:<normalised email>`, `address:<client address>`): the attempts
-- counted (each reserved before its password is checked) and when the next one is allowed.
CREATE TABLE "auth"."login_throttle" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "next_allowed_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "login_throttle_pkey" PRIMARY KEY ("key")
);
