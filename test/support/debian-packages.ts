import { SANDBOX_PACKAGES } from "../../local-front/bindings/sandbox/config.js";
import { SQLITE_PACKAGE } from "../../local-front/backup/sqlite.js";
import { installMissing, type Needed } from "../../local-front/process/debian-packages.js";

/**
 * The Debian packages the Node tests drive for real: bubblewrap (the sandbox every
 * session's tool commands run in), sqlite3 (the backup, whose copies the tests read too)
 * and Chromium (the browser tests). A clean machine gets
 * them here, the way `npm start` gets bubblewrap, so `npm test` needs nothing installed by hand.
 */
const NEEDED: Needed[] = [...SANDBOX_PACKAGES, SQLITE_PACKAGE, { command: "chromium", pkg: "chromium", purpose: "the browser tests" }];

export default function setup(): void {
  const missing = installMissing(NEEDED, true, (line) => console.log(`test setup: ${line}`));
  if (missing) throw new Error(`the tests cannot run: ${missing.reason}; ${missing.remedy}`);
}
