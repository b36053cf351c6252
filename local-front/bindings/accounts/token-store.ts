import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { OAuthLogin } from "../../../src/api/accounts.js";
import { storageFault } from "../../../src/rules/storage-fault.js";

export interface LoginTokens {
  refreshToken: string;
  accessToken?: string;
  expiresAt?: number;
  /** When the access token was issued, so its lifetime is known. */
  issuedAt?: number;
}

interface Entry extends LoginTokens {
  /** Hash of the refresh token the accounts file held when this entry was made. */
  origin: string;
}

function fingerprint(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The tokens refreshes produced, kept on the host (mode 0600) because providers rotate
 * refresh tokens: losing the new one would lose the login. An entry applies only while
 * the accounts file still holds the refresh token it grew from, so an operator who puts
 * a fresh login in the file is obeyed.
 */
export class TokenStore {
  private entries: Record<string, Entry>;
  /** A full volume refused the last save: the file is behind memory until a save succeeds. */
  private unsaved = false;

  constructor(private readonly path: string) {
    this.entries = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, Entry>) : {};
  }

  get(account: string, login: OAuthLogin): LoginTokens {
    if (this.unsaved) this.save();
    const entry = this.entries[account];
    if (entry && entry.origin === fingerprint(login.refreshToken)) return entry;
    return { refreshToken: login.refreshToken, accessToken: login.accessToken, expiresAt: login.expiresAt };
  }

  put(account: string, login: OAuthLogin, tokens: LoginTokens): void {
    this.entries[account] = { ...tokens, origin: fingerprint(login.refreshToken) };
    this.save();
  }

  /**
   * A full volume does not lose a rotated token: it is kept in memory (the login goes on)
   * and written by the next look at the store once the volume takes it.
   */
  private save(): void {
    const temp = `${this.path}.tmp`;
    try {
      writeFileSync(temp, JSON.stringify(this.entries), { mode: 0o600 });
      renameSync(temp, this.path);
      this.unsaved = false;
    } catch (err) {
      const full = storageFault(err, true);
      if (!full) throw err;
      if (!this.unsaved) console.error(`agent-runtime: the token store could not be saved (${full}); it is kept in memory until the volume takes it`);
      this.unsaved = true;
    }
  }
}
