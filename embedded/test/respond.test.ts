// Answering the webhook's caller on the embedded bus (PGlite, or Postgres with DATABASE_URL).
import { respondSuite } from './helpers/respond-suite.ts';

respondSuite();
